import {
  boundDiff,
  DIFF_TRUNCATED_LINE,
  MAX_PREVIEW_DIFF_BYTES,
  objectYamlForDiff,
  unifiedDiff,
} from '../../domain/kube-diff';

const labels = { from: 'live/deployment/default/api', to: 'dry-run/deployment/default/api' };
const text = (...lines: string[]) => lines.map((l) => `${l}\n`).join('');
const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`);

/** Applies a unified diff to `before` (the hunks' old ranges must match exactly): what `patch` does. */
function applyDiff(before: string, diff: string): string {
  const old = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  const lines = diff.replace(/\n$/, '').split('\n').slice(2);
  for (let i = 0; i < lines.length; i++) {
    const header = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(lines[i]);
    if (!header) throw new Error(`not a hunk header: ${lines[i]}`);
    const oldCount = Number(header[2]);
    const start = oldCount === 0 ? Number(header[1]) : Number(header[1]) - 1;
    out.push(...old.slice(at, start));
    at = start;
    while (i + 1 < lines.length && !lines[i + 1].startsWith('@@')) {
      const line = lines[++i];
      const body = line.slice(1);
      if (line[0] === ' ' || line[0] === '-') {
        expect(old[at]).toBe(body);
        at++;
      }
      if (line[0] === ' ' || line[0] === '+') out.push(body);
    }
  }
  out.push(...old.slice(at));
  return out.length ? text(...out) : '';
}

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('', '', labels)).toBe('');
    expect(unifiedDiff(text('a', 'b'), text('a', 'b'), labels)).toBe('');
  });

  it('writes one hunk with three lines of context, as diff -u does', () => {
    const before = text(...numbered(10));
    const after = text(...numbered(4), 'line 5 changed', ...numbered(5, 6));
    expect(unifiedDiff(before, after, labels)).toBe(
      text(
        '--- live/deployment/default/api',
        '+++ dry-run/deployment/default/api',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+line 5 changed',
        ' line 6',
        ' line 7',
        ' line 8',
      ),
    );
  });

  it('numbers additions and removals at the edges like diff -u (an empty side is ",0")', () => {
    expect(unifiedDiff('', text('a', 'b'), labels)).toBe(
      text(`--- ${labels.from}`, `+++ ${labels.to}`, '@@ -0,0 +1,2 @@', '+a', '+b'),
    );
    expect(unifiedDiff(text('a', 'b'), '', labels)).toBe(
      text(`--- ${labels.from}`, `+++ ${labels.to}`, '@@ -1,2 +0,0 @@', '-a', '-b'),
    );
    // An insertion after line 1 with no context: the old range is empty and names line 1.
    expect(unifiedDiff(text('a', 'c'), text('a', 'b', 'c'), labels, 0)).toContain('@@ -1,0 +2,1 @@\n+b\n');
  });

  it('merges changes up to 2×context lines apart and splits those further apart', () => {
    const before = text(...numbered(30));
    const near = before.replace('line 5\n', 'five\n').replace('line 11\n', 'eleven\n'); // 5 lines between
    expect(unifiedDiff(before, near, labels).match(/^@@/gm)).toHaveLength(1);
    const far = before.replace('line 5\n', 'five\n').replace('line 20\n', 'twenty\n');
    expect(unifiedDiff(before, far, labels).match(/^@@/gm)).toHaveLength(2);
  });

  it('produces diffs that turn the old text into the new one', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const a = Array.from({ length: Math.floor(random() * 25) }, () => `l${Math.floor(random() * 6)}`);
      const b = a.flatMap((l) => {
        const r = random();
        return r < 0.15 ? [] : r < 0.3 ? [l, `new${Math.floor(random() * 4)}`] : r < 0.4 ? ['other'] : [l];
      });
      const [before, after] = [a.length ? text(...a) : '', b.length ? text(...b) : ''];
      const context = Math.floor(random() * 4);
      const diff = unifiedDiff(before, after, labels, context);
      if (before === after) expect(diff).toBe('');
      else expect(applyDiff(before, diff)).toBe(after);
    }
  });
});

describe('objectYamlForDiff', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'api',
      namespace: 'default',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: new Date('2026-01-02T03:04:05Z'),
      managedFields: [{ manager: 'kubectl' }],
      labels: { tier: 'web', app: 'api' },
      annotations: undefined,
    },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'app', image: 'example.com/api:1' }] } } },
    status: { replicas: 2 },
  };

  it('drops status and the metadata every write rewrites, and sorts keys', () => {
    expect(objectYamlForDiff(deployment)).toBe(
      text(
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  labels:',
        '    app: api',
        '    tier: web',
        '  name: api',
        '  namespace: default',
        'spec:',
        '  replicas: 2',
        '  template:',
        '    spec:',
        '      containers:',
        '        - image: example.com/api:1',
        '          name: app',
      ),
    );
  });

  it('gives equal text for equal objects written in another key order, and leaves its input alone', () => {
    const reordered = {
      status: {},
      spec: deployment.spec,
      metadata: { ...deployment.metadata, resourceVersion: '43' },
      kind: 'Deployment',
      apiVersion: 'apps/v1',
    };
    expect(objectYamlForDiff(reordered)).toBe(objectYamlForDiff(deployment));
    expect(deployment.metadata.uid).toBe('u-1');
    expect(objectYamlForDiff(undefined)).toBe('');
  });

  it('shows Dates as RFC 3339 text', () => {
    expect(objectYamlForDiff({ metadata: { deletionTimestamp: new Date('2026-01-02T03:04:05Z') } })).toContain(
      'deletionTimestamp: 2026-01-02T03:04:05.000Z',
    );
  });
});

describe('boundDiff', () => {
  it('keeps a diff within the bound as it is', () => {
    const small = text('--- a', '+++ b', '@@ -1,1 +1,1 @@', '-x', '+y');
    expect(boundDiff(small)).toBe(small);
  });

  it('cuts at a line end, marks the cut and stays within the bound in bytes', () => {
    const big = text(...Array.from({ length: 2000 }, (_, i) => `+ligne née ${i}`));
    const cut = boundDiff(big);
    expect(new TextEncoder().encode(cut).length).toBeLessThanOrEqual(MAX_PREVIEW_DIFF_BYTES);
    expect(cut.endsWith(`\n${DIFF_TRUNCATED_LINE}\n`)).toBe(true);
    const kept = cut.split('\n').slice(0, -2);
    expect(kept.every((line, i) => line === `+ligne née ${i}`)).toBe(true);
  });
});
