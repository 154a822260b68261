import { SIGNAL_DESCRIPTION_MAX, SIGNAL_LABEL_KEY_MAX, SIGNAL_LABEL_VALUE_MAX, type Signal } from './incident';
import { isDnsLabel, isObjectName } from './kube-names';
import { SIGNAL_TYPES, type Severity, type SignalType } from './vocabulary';

/**
 * Prometheus Alertmanager webhook (payload version 4) and the alert → signal mapping of
 * DESIGN §6. Pure: the API route parses the body with `alertmanagerPayloadSchema`
 * (contracts/alertmanager.ts) and feeds each alert through `mapAlert`; firing signals open or
 * join incidents, resolved ones resolve.
 *
 * Payload reference: https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
 */

// ---------------------------------------------------------------------------------------------
// Payload
// ---------------------------------------------------------------------------------------------

export const ALERT_STATUSES = ['firing', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** Alertmanager uses this zero time for `endsAt` of alerts that are still firing. */
export const ALERTMANAGER_ZERO_TIME = '0001-01-01T00:00:00Z';

/** The most alerts one webhook call may carry (Alertmanager's `max_alerts` truncates before this). */
export const MAX_ALERTS_PER_PAYLOAD = 1000;

/** One alert of a payload, as parsed (contracts/alertmanager.ts). */
export interface AlertmanagerAlert {
  status: AlertStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Go's RFC3339Nano: up to nine fractional digits, `Z` or a numeric offset. */
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

// ---------------------------------------------------------------------------------------------
// Mapping
// ---------------------------------------------------------------------------------------------

/**
 * kube-prometheus / kube-state-metrics / node-exporter alert names → signal types. Merged with
 * the configured map (which wins); names in neither map to `Custom`.
 */
export const DEFAULT_ALERTNAME_MAP: Readonly<Record<string, SignalType>> = Object.freeze({
  KubePodCrashLooping: 'CrashLoopBackOff',

  KubeContainerOOMKilled: 'OOMKilled',
  KubePodOOMKilled: 'OOMKilled',
  ContainerOOMKilled: 'OOMKilled',

  KubePodNotReady: 'PodNotReady',

  KubeDeploymentReplicasMismatch: 'DeploymentFailing',
  KubeDeploymentRolloutStuck: 'DeploymentFailing',
  KubeDeploymentGenerationMismatch: 'DeploymentFailing',
  KubeStatefulSetReplicasMismatch: 'DeploymentFailing',
  KubeStatefulSetGenerationMismatch: 'DeploymentFailing',
  KubeStatefulSetUpdateNotRolledOut: 'DeploymentFailing',
  KubeDaemonSetRolloutStuck: 'DeploymentFailing',

  KubePodImagePullBackOff: 'ImagePullBackOff',

  HighRequestLatency: 'HighLatency',
  APIHighLatency: 'HighLatency',
  HTTPHighLatency: 'HighLatency',

  HighErrorRate: 'HighErrorRate',
  HTTPHighErrorRate: 'HighErrorRate',
  KubeAPIErrorsHigh: 'HighErrorRate',

  CPUThrottlingHigh: 'HighCPU',
  KubeCPUOvercommit: 'HighCPU',
  HighCPUUsage: 'HighCPU',

  KubeMemoryOvercommit: 'HighMemory',
  HighMemoryUsage: 'HighMemory',
  ContainerMemoryNearLimit: 'HighMemory',

  KubeNodeDiskPressure: 'DiskPressure',
  NodeFilesystemAlmostOutOfSpace: 'DiskPressure',
  NodeFilesystemSpaceFillingUp: 'DiskPressure',
  KubePersistentVolumeFillingUp: 'DiskPressure',

  KubeNodeUnreachable: 'NetworkUnavailable',
  NodeNetworkReceiveErrs: 'NetworkUnavailable',
  KubeNodeNetworkUnavailable: 'NetworkUnavailable',
});

/** Resource labels in priority order, with the kind each one names. */
export const RESOURCE_LABELS = [
  ['deployment', 'Deployment'],
  ['statefulset', 'StatefulSet'],
  ['daemonset', 'DaemonSet'],
  ['pod', 'Pod'],
  ['node', 'Node'],
] as const;

export const NO_RESOURCE_LABEL_REASON = 'no resource label (deployment, statefulset, daemonset, pod or node)';

// Alertmanager `severity` label → Foghorn severity. `medium` is accepted as itself so a source
// already speaking Foghorn's vocabulary is not downgraded to "unrated".
const SEVERITY_LABELS: Readonly<Record<string, Severity>> = {
  critical: 'critical',
  error: 'high',
  high: 'high',
  warning: 'medium',
  medium: 'medium',
  info: 'low',
  low: 'low',
};

export interface MapAlertOptions {
  /** alertname → signal type; entries override DEFAULT_ALERTNAME_MAP. */
  signalTypeMap?: Readonly<Record<string, SignalType>>;
}

export type AlertMapping =
  | { ok: true; signal: Signal; status: AlertStatus; fingerprint: string }
  | { ok: false; reason: string; fingerprint: string };

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** A label's value, treating empty as absent (as Prometheus does). */
function label(labels: Readonly<Record<string, string>>, key: string): string | undefined {
  const v = hasOwn(labels, key) ? labels[key] : undefined;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** `signal_type` label (case-insensitive) when it names a known SignalType. */
function signalTypeFromLabel(value: string | undefined): SignalType | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  return SIGNAL_TYPES.find((t) => t.toLowerCase() === lower);
}

/** The signal type for an alert name: configured map, then the default map, else `Custom`. */
export function signalTypeForAlertname(
  alertname: string | undefined,
  signalTypeMap?: Readonly<Record<string, SignalType>>,
): SignalType {
  if (alertname === undefined) return 'Custom';
  for (const map of [signalTypeMap, DEFAULT_ALERTNAME_MAP]) {
    if (map === undefined || !hasOwn(map, alertname)) continue;
    // The configured map comes from user config: ignore an entry that is not a signal type.
    const type = map[alertname];
    if ((SIGNAL_TYPES as readonly string[]).includes(type)) return type;
  }
  return 'Custom';
}

/** Alertmanager `severity` label → Severity; undefined when absent or unknown (the risk score decides). */
export function severityFromLabel(value: string | undefined): Severity | undefined {
  if (value === undefined) return undefined;
  const key = value.trim().toLowerCase();
  return hasOwn(SEVERITY_LABELS, key) ? SEVERITY_LABELS[key] : undefined;
}

/** Labels within a signal's limits: longer values are cut and longer keys dropped, rather than the alert lost. */
function cappedLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) {
    if (k.length > SIGNAL_LABEL_KEY_MAX || typeof v !== 'string') continue;
    out[k] = v.length > SIGNAL_LABEL_VALUE_MAX ? v.slice(0, SIGNAL_LABEL_VALUE_MAX) : v;
  }
  return out;
}

/**
 * One Alertmanager alert → a fully defaulted Signal (DESIGN §6), or the reason it cannot be
 * mapped. Never throws for a schema-valid alert. Every field is checked or cut to the limits of
 * contracts/incidents.ts signalSchema here, so the signal needs no second validation.
 */
export function mapAlert(alert: AlertmanagerAlert, opts: MapAlertOptions = {}): AlertMapping {
  const fingerprint = alert.fingerprint;
  const labels = alert.labels ?? {};
  const annotations = alert.annotations ?? {};
  const fail = (reason: string): AlertMapping => ({ ok: false, reason, fingerprint });

  // Resource: the first resource label present, in RESOURCE_LABELS order.
  const found = RESOURCE_LABELS.map(([key, kind]) => ({ key, kind, name: label(labels, key) })).find(
    (r) => r.name !== undefined,
  );
  if (found === undefined || found.name === undefined) return fail(NO_RESOURCE_LABEL_REASON);
  if (!isObjectName(found.name))
    return fail(`invalid ${found.key} name ${JSON.stringify(found.name)}: must be a Kubernetes object name`);
  const resource = `${found.kind}/${found.name}`;

  const namespace = label(labels, 'namespace') ?? 'default';
  if (!isDnsLabel(namespace)) return fail(`invalid namespace ${JSON.stringify(namespace)}: must be a DNS label`);

  const clusterLabel = label(labels, 'cluster');
  const cluster = clusterLabel !== undefined && isDnsLabel(clusterLabel) ? clusterLabel : 'local';

  const alertname = label(labels, 'alertname');
  const signalType =
    signalTypeFromLabel(label(labels, 'signal_type')) ?? signalTypeForAlertname(alertname, opts.signalTypeMap);

  const text =
    label(annotations, 'summary') ??
    label(annotations, 'description') ??
    label(annotations, 'message') ??
    `${alertname ?? 'Alert'} on ${resource}`;

  const severity = severityFromLabel(label(labels, 'severity'));
  const signal: Signal = {
    resource,
    namespace,
    signalType,
    ...(severity === undefined ? {} : { severity }),
    description: text.slice(0, SIGNAL_DESCRIPTION_MAX),
    cluster,
    labels: cappedLabels(labels),
    detectionSource: 'alertmanager',
    startedAt: alert.startsAt,
  };
  return { ok: true, signal, status: alert.status, fingerprint };
}
