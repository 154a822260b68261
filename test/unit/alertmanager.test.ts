import {
  ALERTMANAGER_ZERO_TIME,
  DEFAULT_ALERTNAME_MAP,
  NO_RESOURCE_LABEL_REASON,
  mapAlert,
  severityFromLabel,
  signalTypeForAlertname,
  type AlertmanagerAlert,
} from '../../domain/alertmanager';
import {
  alertmanagerAlertSchema,
  alertmanagerPayloadSchema,
  type AlertmanagerAlertInput,
  type AlertmanagerPayloadInput,
} from '../../contracts/alertmanager';
import { resourceKey } from '../../domain/incident';
import { signalSchema } from '../../contracts/incidents';
import { SIGNAL_TYPES, type Severity, type SignalType } from '../../domain/vocabulary';

/** A webhook body as Alertmanager 0.27 sends it for a kube-prometheus group (one firing, one resolved). */
function payload(): AlertmanagerPayloadInput {
  return {
    receiver: 'foghorn',
    status: 'firing',
    alerts: [
      {
        status: 'firing',
        labels: {
          alertname: 'KubeContainerOOMKilled',
          cluster: 'prod-eu-1',
          container: 'api',
          deployment: 'checkout-api',
          namespace: 'payments',
          pod: 'checkout-api-7d9f8b6c5d-x2x9q',
          prometheus: 'monitoring/k8s',
          reason: 'OOMKilled',
          severity: 'critical',
        },
        annotations: {
          description: 'Container api in pod payments/checkout-api-7d9f8b6c5d-x2x9q has been OOMKilled 3 times.',
          runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubecontaineroomkilled',
          summary: 'Container checkout-api/api was OOMKilled',
        },
        startsAt: '2024-05-14T09:21:37.712Z',
        endsAt: ALERTMANAGER_ZERO_TIME,
        generatorURL:
          'http://prometheus-k8s-0:9090/graph?g0.expr=increase%28kube_pod_container_status_restarts_total%5B10m%5D%29+%3E+0&g0.tab=1',
        fingerprint: '5c1b4f3a2d9e8f71',
      },
      {
        status: 'resolved',
        labels: {
          alertname: 'KubePodCrashLooping',
          container: 'worker',
          namespace: 'payments',
          pod: 'ledger-worker-6b7c9d8f4-k8pzt',
          prometheus: 'monitoring/k8s',
          severity: 'warning',
        },
        annotations: {
          description:
            'Pod payments/ledger-worker-6b7c9d8f4-k8pzt (worker) is in waiting state (reason: "CrashLoopBackOff").',
        },
        startsAt: '2024-05-14T09:05:07.712849571Z',
        endsAt: '2024-05-14T09:20:07.712849571Z',
        generatorURL: 'http://prometheus-k8s-0:9090/graph?g0.expr=kube_pod_container_status_waiting_reason',
        fingerprint: 'a4c7e9b21f03d685',
      },
    ],
    groupLabels: { namespace: 'payments' },
    commonLabels: { namespace: 'payments', prometheus: 'monitoring/k8s' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager-main-0:9093',
    version: '4',
    groupKey: '{}/{namespace=~"payments"}:{namespace="payments"}',
    truncatedAlerts: 0,
  };
}

/** A minimal firing alert; each case overrides labels or annotations. */
function alert(labels: Record<string, string>, annotations: Record<string, string> = {}): AlertmanagerAlert {
  const input: AlertmanagerAlertInput = {
    status: 'firing',
    labels,
    annotations,
    startsAt: '2024-05-14T09:21:37Z',
    endsAt: ALERTMANAGER_ZERO_TIME,
    fingerprint: 'f00dfeed',
  };
  return alertmanagerAlertSchema.parse(input);
}

function mapped(labels: Record<string, string>, annotations: Record<string, string> = {}) {
  const result = mapAlert(alert(labels, annotations));
  if (!result.ok) throw new Error(`expected a mapping, got: ${result.reason}`);
  return result;
}

describe('alertmanagerPayloadSchema', () => {
  it('accepts a full version 4 payload and defaults nothing that was sent', () => {
    const parsed = alertmanagerPayloadSchema.parse(payload());
    expect(parsed.alerts).toHaveLength(2);
    expect(parsed.alerts[0].annotations.summary).toBe('Container checkout-api/api was OOMKilled');
    expect(parsed.alerts[1].status).toBe('resolved');
    expect(parsed.truncatedAlerts).toBe(0);
  });

  it('defaults annotations and generatorURL of an alert', () => {
    const body = payload();
    const first = body.alerts[0];
    delete first.annotations;
    delete first.generatorURL;
    const parsed = alertmanagerPayloadSchema.parse(body);
    expect(parsed.alerts[0].annotations).toEqual({});
    expect(parsed.alerts[0].generatorURL).toBe('');
  });

  it('keeps unknown top-level keys', () => {
    const parsed = alertmanagerPayloadSchema.parse({ ...payload(), extra: 'x' });
    expect((parsed as Record<string, unknown>).extra).toBe('x');
  });

  it('accepts numeric offsets and nanosecond timestamps', () => {
    const body = payload();
    body.alerts[0].startsAt = '2024-05-14T11:21:37.712849571+02:00';
    expect(alertmanagerPayloadSchema.safeParse(body).success).toBe(true);
  });

  it.each<[string, (p: Record<string, unknown>) => void, string]>([
    ['version "3"', (p) => (p.version = '3'), 'version'],
    ['numeric version 4', (p) => (p.version = 4), 'version'],
    ['missing version', (p) => delete p.version, 'version'],
    ['missing alerts', (p) => delete p.alerts, 'alerts'],
    ['empty alerts', (p) => (p.alerts = []), 'alerts'],
    ['too many alerts', (p) => (p.alerts = Array.from({ length: 1001 }, () => payload().alerts[0])), 'alerts'],
    ['bad group status', (p) => (p.status = 'pending'), 'status'],
    ['bad alert status', (p) => ((p.alerts as Record<string, unknown>[])[0].status = 'silenced'), 'alerts.0.status'],
    ['non-string label', (p) => ((p.alerts as { labels: unknown }[])[0].labels = { severity: 3 }), 'alerts.0.labels'],
    ['startsAt not RFC3339', (p) => ((p.alerts as Record<string, unknown>[])[0].startsAt = 'yesterday'), 'alerts.0'],
    ['missing fingerprint', (p) => delete (p.alerts as Record<string, unknown>[])[0].fingerprint, 'alerts.0'],
    ['negative truncatedAlerts', (p) => (p.truncatedAlerts = -1), 'truncatedAlerts'],
    ['fractional truncatedAlerts', (p) => (p.truncatedAlerts = 1.5), 'truncatedAlerts'],
    ['missing groupKey', (p) => delete p.groupKey, 'groupKey'],
    ['missing commonLabels', (p) => delete p.commonLabels, 'commonLabels'],
  ])('rejects %s', (_name, mutate, path) => {
    const body = payload() as unknown as Record<string, unknown>;
    mutate(body);
    const result = alertmanagerPayloadSchema.safeParse(body);
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.issues.some((i) => i.path.join('.').startsWith(path))).toBe(true);
  });
});

describe('mapAlert on the fixture', () => {
  const [oom, crash] = alertmanagerPayloadSchema.parse(payload()).alerts;

  it('maps the firing OOM alert to a complete signal', () => {
    const result = mapAlert(oom);
    expect(result).toEqual({
      ok: true,
      status: 'firing',
      fingerprint: '5c1b4f3a2d9e8f71',
      signal: {
        resource: 'Deployment/checkout-api',
        namespace: 'payments',
        signalType: 'OOMKilled',
        severity: 'critical',
        description: 'Container checkout-api/api was OOMKilled',
        cluster: 'prod-eu-1',
        labels: oom.labels,
        detectionSource: 'alertmanager',
        startedAt: oom.startsAt, // the start of MTTD
      },
    });
    if (result.ok) {
      expect(signalSchema.parse(result.signal)).toEqual(result.signal);
      expect(resourceKey(result.signal)).toBe('prod-eu-1/payments/Deployment/checkout-api');
    }
  });

  it('maps the resolved crash-loop alert, keeping its status', () => {
    const result = mapAlert(crash);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.status).toBe('resolved');
    expect(result.fingerprint).toBe('a4c7e9b21f03d685');
    expect(result.signal).toMatchObject({
      resource: 'Pod/ledger-worker-6b7c9d8f4-k8pzt',
      namespace: 'payments',
      signalType: 'CrashLoopBackOff',
      severity: 'medium',
      cluster: 'local',
      description: crash.annotations.description,
    });
  });
});

describe('mapAlert: resource', () => {
  it.each<[Record<string, string>, string]>([
    [{ deployment: 'web' }, 'Deployment/web'],
    [{ statefulset: 'postgres' }, 'StatefulSet/postgres'],
    [{ daemonset: 'fluent-bit' }, 'DaemonSet/fluent-bit'],
    [{ pod: 'web-5d4f-abcde' }, 'Pod/web-5d4f-abcde'],
    [{ node: 'ip-10-0-1-23.eu-west-1.compute.internal' }, 'Node/ip-10-0-1-23.eu-west-1.compute.internal'],
    // priority: deployment > statefulset > daemonset > pod > node
    [{ node: 'n1', pod: 'p1', deployment: 'd1' }, 'Deployment/d1'],
    [{ node: 'n1', pod: 'p1', statefulset: 's1' }, 'StatefulSet/s1'],
    [{ node: 'n1', pod: 'p1', daemonset: 'ds1' }, 'DaemonSet/ds1'],
    [{ node: 'n1', pod: 'p1' }, 'Pod/p1'],
    // an empty label counts as absent, as in Prometheus
    [{ deployment: '', pod: 'p1' }, 'Pod/p1'],
  ])('%j → %s', (labels, resource) => {
    expect(mapped({ alertname: 'X', ...labels }).signal.resource).toBe(resource);
  });

  it('defaults the namespace to "default"', () => {
    expect(mapped({ deployment: 'web' }).signal.namespace).toBe('default');
    expect(mapped({ deployment: 'web', namespace: 'shop' }).signal.namespace).toBe('shop');
  });

  it.each<[string, Record<string, string>, string]>([
    ['no resource label', { alertname: 'Watchdog', namespace: 'monitoring' }, NO_RESOURCE_LABEL_REASON],
    ['only a container label', { container: 'api', namespace: 'shop' }, NO_RESOURCE_LABEL_REASON],
    ['uppercase deployment name', { deployment: 'CheckoutAPI' }, 'invalid deployment name "CheckoutAPI"'],
    ['underscore in pod name', { pod: 'web_1' }, 'invalid pod name "web_1"'],
    ['name ending in a dash', { statefulset: 'db-' }, 'invalid statefulset name "db-"'],
    ['overlong node name', { node: 'a'.repeat(254) }, 'invalid node name'],
    ['invalid namespace', { deployment: 'web', namespace: 'Kube_System' }, 'invalid namespace "Kube_System"'],
  ])('fails on %s', (_name, labels, reason) => {
    const result = mapAlert(alert(labels));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toContain(reason);
      expect(result.fingerprint).toBe('f00dfeed');
    }
  });
});

describe('mapAlert: signal type', () => {
  it.each(Object.entries(DEFAULT_ALERTNAME_MAP))('alertname %s → %s', (alertname, type) => {
    expect(mapped({ alertname, deployment: 'web' }).signal.signalType).toBe(type);
  });

  it('maps the kube-prometheus names the design calls out', () => {
    const expected: Record<string, SignalType> = {
      KubePodCrashLooping: 'CrashLoopBackOff',
      KubeContainerOOMKilled: 'OOMKilled',
      KubePodNotReady: 'PodNotReady',
      KubeDeploymentReplicasMismatch: 'DeploymentFailing',
      KubePodImagePullBackOff: 'ImagePullBackOff',
      CPUThrottlingHigh: 'HighCPU',
      KubeNodeDiskPressure: 'DiskPressure',
      KubeNodeUnreachable: 'NetworkUnavailable',
    };
    expect(DEFAULT_ALERTNAME_MAP).toMatchObject(expected);
    // Every default target is a real signal type.
    for (const type of Object.values(DEFAULT_ALERTNAME_MAP)) expect(SIGNAL_TYPES).toContain(type);
  });

  it('maps unknown and missing alert names to Custom', () => {
    expect(mapped({ alertname: 'Watchdog', deployment: 'web' }).signal.signalType).toBe('Custom');
    expect(mapped({ deployment: 'web' }).signal.signalType).toBe('Custom');
    // Object.prototype keys are not map entries.
    expect(mapped({ alertname: 'constructor', deployment: 'web' }).signal.signalType).toBe('Custom');
    expect(mapped({ alertname: '__proto__', deployment: 'web' }).signal.signalType).toBe('Custom');
  });

  it('prefers a known signal_type label over the alert name', () => {
    expect(
      mapped({ alertname: 'KubePodCrashLooping', signal_type: 'OOMKilled', deployment: 'web' }).signal.signalType,
    ).toBe('OOMKilled');
    expect(mapped({ alertname: 'Whatever', signal_type: 'highlatency', deployment: 'web' }).signal.signalType).toBe(
      'HighLatency',
    );
  });

  it('ignores an unknown signal_type label', () => {
    expect(
      mapped({ alertname: 'KubePodCrashLooping', signal_type: 'Meltdown', deployment: 'web' }).signal.signalType,
    ).toBe('CrashLoopBackOff');
  });

  it('lets the configured map add and override names', () => {
    const signalTypeMap: Record<string, SignalType> = {
      KubePodCrashLooping: 'PodNotReady',
      CheckoutSlow: 'HighLatency',
    };
    const map = (alertname: string) => mapAlert(alert({ alertname, deployment: 'web' }), { signalTypeMap });
    expect(map('KubePodCrashLooping')).toMatchObject({ ok: true, signal: { signalType: 'PodNotReady' } });
    expect(map('CheckoutSlow')).toMatchObject({ ok: true, signal: { signalType: 'HighLatency' } });
    expect(map('KubeContainerOOMKilled')).toMatchObject({ ok: true, signal: { signalType: 'OOMKilled' } });
  });

  it('ignores a configured entry that is not a signal type', () => {
    const signalTypeMap = { KubePodCrashLooping: 'Broken' } as unknown as Record<string, SignalType>;
    expect(signalTypeForAlertname('KubePodCrashLooping', signalTypeMap)).toBe('CrashLoopBackOff');
    expect(signalTypeForAlertname('Unknown', signalTypeMap)).toBe('Custom');
  });
});

describe('mapAlert: severity', () => {
  it.each<[string | undefined, Severity | undefined]>([
    ['critical', 'critical'],
    ['error', 'high'],
    ['high', 'high'],
    ['warning', 'medium'],
    ['info', 'low'],
    ['low', 'low'],
    ['Critical', 'critical'],
    [' WARNING ', 'medium'],
    ['none', undefined],
    ['page', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('severity label %j → %s', (value, severity) => {
    expect(severityFromLabel(value)).toBe(severity);
    const labels: Record<string, string> = { alertname: 'X', deployment: 'web' };
    if (value !== undefined) labels.severity = value;
    const { signal } = mapped(labels);
    expect(signal.severity).toBe(severity);
    if (severity === undefined) expect('severity' in signal).toBe(false);
  });
});

describe('mapAlert: description, cluster, labels', () => {
  const labels = { alertname: 'KubePodNotReady', pod: 'web-1', namespace: 'shop' };

  it.each<[Record<string, string>, string]>([
    [{ summary: 'S', description: 'D', message: 'M' }, 'S'],
    [{ description: 'D', message: 'M' }, 'D'],
    [{ message: 'M' }, 'M'],
    [{ summary: '   ', description: 'D' }, 'D'],
    [{ runbook_url: 'https://example.com' }, 'KubePodNotReady on Pod/web-1'],
    [{}, 'KubePodNotReady on Pod/web-1'],
  ])('annotations %j → %j', (annotations, description) => {
    expect(mapped(labels, annotations).signal.description).toBe(description);
  });

  it('names an alert without alertname generically', () => {
    expect(mapped({ node: 'n1' }).signal.description).toBe('Alert on Node/n1');
  });

  it('caps a huge description at the signal limit', () => {
    expect(mapped(labels, { summary: 'x'.repeat(5000) }).signal.description).toHaveLength(4000);
  });

  it.each<[string | undefined, string]>([
    ['prod-eu-1', 'prod-eu-1'],
    [undefined, 'local'],
    ['', 'local'],
    ['Prod_EU', 'local'],
    ['a'.repeat(64), 'local'],
  ])('cluster label %j → %s', (cluster, expected) => {
    expect(mapped(cluster === undefined ? labels : { ...labels, cluster }).signal.cluster).toBe(expected);
  });

  it('keeps every label and marks the source', () => {
    const all = { ...labels, severity: 'warning', team: 'storefront', instance: '10.0.0.7:8080' };
    const { signal } = mapped(all);
    expect(signal.labels).toEqual(all);
    expect(signal.detectionSource).toBe('alertmanager');
  });

  it('cuts over-long label values instead of dropping the alert', () => {
    const { signal } = mapped({ ...labels, query: 'q'.repeat(2000) });
    expect(signal.labels.query).toHaveLength(1024);
  });
});
