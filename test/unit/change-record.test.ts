import {
  authorOf,
  configRefs,
  isRestartOnly,
  revisionChange,
  sourceOf,
  templateDiff,
  type PodTemplate,
} from '../../domain/change-record';

type Container = NonNullable<NonNullable<PodTemplate['spec']>['containers']>[number];
const template = (image: string, extra: Partial<Container> = {}) =>
  ({
    metadata: { labels: { app: 'checkout', 'pod-template-hash': image }, annotations: {} },
    spec: { containers: [{ name: 'app', image, ...extra }] },
  }) as PodTemplate;

describe('templateDiff', () => {
  it('names images, resources, command, probes and env names, never an env value', () => {
    const before = template('checkout:1', {
      env: [{ name: 'MODE', value: 'safe' }],
      resources: { limits: { memory: '512Mi' } },
      command: ['/app'],
    });
    const after = template('checkout:2', {
      env: [
        { name: 'MODE', value: 'fast-and-secret' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'tok', key: 'k' } } },
      ],
      resources: { limits: { memory: '64Mi' } },
      command: ['/app', '--fast'],
      readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
    });
    const diff = templateDiff(before, after);
    expect(diff).toEqual(
      expect.arrayContaining([
        { field: 'image app', from: 'checkout:1', to: 'checkout:2' },
        { field: 'limits.memory app', from: '512Mi', to: '64Mi' },
        { field: 'command app', from: '["/app"]', to: '["/app","--fast"]' },
        { field: 'readinessProbe app', from: '', to: 'set' },
        { field: 'env app', from: '', to: 'added TOKEN' },
        { field: 'env app', from: 'MODE (a value)', to: 'MODE changed (a value)' },
      ]),
    );
    expect(JSON.stringify(diff)).not.toContain('fast-and-secret');
  });

  it('a probe with its keys in another order is no change; volumes are named by source', () => {
    const a: PodTemplate = {
      spec: {
        containers: [{ name: 'app', livenessProbe: { periodSeconds: 5, httpGet: { port: 1 } } }],
        volumes: [{ name: 'cfg', configMap: { name: 'v1' } }],
      },
    };
    const b: PodTemplate = {
      spec: {
        containers: [{ name: 'app', livenessProbe: { httpGet: { port: 1 }, periodSeconds: 5 } }],
        volumes: [{ name: 'cfg', configMap: { name: 'v2' } }],
      },
    };
    expect(templateDiff(a, b)).toEqual([{ field: 'volume cfg', from: 'ConfigMap/v1', to: 'ConfigMap/v2' }]);
  });
});

describe('isRestartOnly', () => {
  it('a new restartedAt (and the controller’s hash label) is a restart; anything else is not', () => {
    const a = template('checkout:1');
    const b = {
      ...template('checkout:1'),
      metadata: {
        labels: { app: 'checkout', 'pod-template-hash': 'other' },
        annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-12-07T10:00:00Z' },
      },
    };
    expect(isRestartOnly(a, b)).toBe(true);
    expect(isRestartOnly(a, template('checkout:2'))).toBe(false);
    const change = revisionChange({
      cluster: 'c',
      namespace: 'shop',
      workload: 'Deployment/checkout',
      revision: 3,
      previousRevision: 2,
      template: b,
      previousTemplate: a,
      at: new Date(0),
      by: { manager: 'foghorn', changeCause: '', source: '', foghorn: true },
    });
    expect(change).toMatchObject({ type: 'Restart', id: 'c|shop/Deployment/checkout|revision|3', diff: [] });
  });
});

describe('who changed it', () => {
  const at = new Date('2026-12-07T10:00:00Z');
  it('the manager that owns the changed fields, written by the change', () => {
    const meta = {
      annotations: { 'kubernetes.io/change-cause': 'deploy 2' },
      managedFields: [
        { manager: 'kube-controller-manager', time: '2026-12-07T10:00:01Z', fieldsV1: { 'f:status': {} } },
        { manager: 'argocd-controller', time: '2026-12-07T09:59:59Z', fieldsV1: { 'f:spec': { 'f:template': {} } } },
        { manager: 'kubectl', time: '2026-12-01T00:00:00Z', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      ],
    };
    expect(authorOf(meta, ['spec', 'template'], at)).toEqual({
      manager: 'argocd-controller',
      changeCause: 'deploy 2',
      source: '',
      foghorn: false,
    });
    // A write long after the change is not its author.
    expect(authorOf(meta, ['spec', 'template'], new Date('2026-12-07T09:00:00Z')).manager).toBe('');
  });

  it('GitOps and release tools name their source', () => {
    expect(sourceOf({ annotations: { 'argocd.argoproj.io/revision': '1a2b3c4' } })).toBe('argocd revision 1a2b3c4');
    expect(sourceOf({ annotations: { 'kustomize.toolkit.fluxcd.io/revision': 'main@sha1:abc' } })).toBe(
      'flux main@sha1:abc',
    );
    expect(
      sourceOf({ labels: { 'helm.sh/chart': 'shop-1.4.2' }, annotations: { 'meta.helm.sh/release-name': 'shop' } }),
    ).toBe('helm chart shop-1.4.2 (release shop)');
    expect(sourceOf({})).toBe('');
  });
});

it('configRefs: mounted, projected, envFrom and env references', () => {
  expect(
    configRefs({
      spec: {
        volumes: [
          { name: 'a', configMap: { name: 'cm-a' } },
          { name: 'b', secret: { secretName: 's-b' } },
          { name: 'c', projected: { sources: [{ configMap: { name: 'cm-c' } }] } },
        ],
        containers: [
          {
            name: 'app',
            envFrom: [{ secretRef: { name: 's-env' } }],
            env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm-x', key: 'k' } } }],
          },
        ],
      },
    }),
  ).toEqual(['ConfigMap/cm-a', 'ConfigMap/cm-c', 'ConfigMap/cm-x', 'Secret/s-b', 'Secret/s-env']);
});
