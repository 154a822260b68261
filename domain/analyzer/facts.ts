import { splitResource } from '../incident';
import type { Severity, SignalType } from '../vocabulary';
import type { AnalysisContext } from './types';

/** What the rules read from the context: the resource, its labels and the signal's description. */

const K8S_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// Kubernetes label values: empty, or alphanumeric at both ends with - _ . inside, at most 63.
const LABEL_VALUE_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export const isK8sName = (s: string): boolean => s.length <= 253 && K8S_NAME_RE.test(s);
export const isDnsLabel = (s: string): boolean => s.length <= 63 && DNS_LABEL_RE.test(s);

export interface Facts {
  resource: string;
  kind: string;
  name: string;
  namespace: string;
  /** The namespace when it can go into action params. */
  ns: string | undefined;
  /** `kubectl` reference to the workload, e.g. `deployment/checkout-api`. */
  ref: string;
  /** `kubectl -n <ns>` (no namespace flag for cluster-scoped nodes). */
  kubectl: string;
  description: string;
  text: string; // description + reason label, lower-cased, for keyword checks
  labels: Record<string, string>;
  reason: string | undefined;
  exitCode: number | undefined;
  container: string | undefined;
  memoryLimit: string | undefined;
  image: string | undefined;
  alertname: string | undefined;
  /** `key=value` selecting the workload's pods, from an `app` label. */
  appSelector: string | undefined;
  correlated: Set<SignalType>;
  hasRelated: boolean;
  severity: Severity | undefined;
}

export function labelOf(labels: Record<string, string>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
    const v = labels[key];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

export function factsOf(ctx: AnalysisContext): Facts {
  const { incident } = ctx;
  const labels = incident.labels ?? {};
  const split = incident.resource.includes('/')
    ? splitResource(incident.resource)
    : { kind: '', name: incident.resource };
  const reason = labelOf(labels, 'reason', 'waiting_reason', 'terminated_reason');
  const exit = labelOf(labels, 'exit_code', 'exitcode', 'exitCode');
  const exitCode = exit !== undefined && /^\d{1,3}$/.test(exit) ? Number(exit) : undefined;
  const container = labelOf(labels, 'container');
  const app = labelOf(labels, 'app');
  const appK8s = labelOf(labels, 'app.kubernetes.io/name', 'app_kubernetes_io_name');
  const selectorValue = (v: string | undefined) => v !== undefined && v.length <= 63 && LABEL_VALUE_RE.test(v);
  const appSelector = selectorValue(app)
    ? `app=${app}`
    : selectorValue(appK8s)
      ? `app.kubernetes.io/name=${appK8s}`
      : undefined;
  const description = (incident.description ?? '').trim();
  const namespace = incident.namespace;
  return {
    resource: incident.resource,
    kind: split.kind,
    name: split.name,
    namespace,
    ns: isDnsLabel(namespace) ? namespace : undefined,
    ref: `${split.kind.toLowerCase()}/${split.name}`,
    kubectl: split.kind === 'Node' ? 'kubectl' : `kubectl -n ${namespace}`,
    description,
    text: `${description} ${reason ?? ''}`.toLowerCase(),
    labels,
    reason,
    exitCode,
    container: container !== undefined && isDnsLabel(container) ? container : undefined,
    memoryLimit: labelOf(labels, 'memory_limit'),
    image: labelOf(labels, 'image'),
    alertname: labelOf(labels, 'alertname'),
    appSelector,
    correlated: new Set((incident.correlatedSignals ?? []).map((s) => s.signalType)),
    hasRelated: (ctx.related ?? []).length > 0,
    severity: incident.severity,
  };
}
