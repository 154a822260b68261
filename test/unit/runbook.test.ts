import { z } from 'zod';
import { ACTION_TYPES, SEMVER_RE, type RunbookInput } from '../../domain/runbook';
import { actionSchema, runbookSpecSchema, runbookUpdateSchema } from '../../contracts/runbooks';
import {
  RUNBOOK_CATEGORIES,
  SIGNAL_TYPES,
  categoryForSignal,
  type RunbookCategory,
  type SignalType,
} from '../../domain/vocabulary';
import { BUILTIN_RUNBOOKS } from '../../contracts/runbooks';

/** A minimal valid spec; each invalid case changes one thing. */
function spec(overrides: Record<string, unknown> = {}): RunbookInput {
  return {
    name: 'demo-runbook',
    category: 'custom',
    description: 'A runbook used by the tests.',
    version: '1.0.0',
    severity: ['high'],
    steps: [{ type: 'Wait', params: { duration: '30s' } }],
    ...overrides,
  } as RunbookInput;
}

/** The issues of a failed parse; fails the test when the parse succeeds. */
function issuesOf(schema: z.ZodTypeAny, input: unknown): z.ZodIssue[] {
  const result = schema.safeParse(input);
  if (result.success) throw new Error(`expected a validation error, got ${JSON.stringify(result.data)}`);
  return result.error.issues;
}

/** Asserts some issue sits at `path` and (optionally) its message matches. */
function expectIssue(
  input: unknown,
  path: (string | number)[],
  message?: RegExp,
  schema: z.ZodTypeAny = runbookSpecSchema,
) {
  const issues = issuesOf(schema, input);
  const atPath = issues.filter((i) => JSON.stringify(i.path) === JSON.stringify(path));
  expect({ path, issues: atPath.length > 0 ? 'found' : issues }).toEqual({
    path,
    issues: 'found',
  });
  if (message) expect(atPath.map((i) => i.message).join(' | ')).toMatch(message);
}

const step = (type: string, params: unknown) => spec({ steps: [{ type, params }] });

describe('built-in runbook library', () => {
  it('parses every entry and re-parses to the same value', () => {
    expect(BUILTIN_RUNBOOKS.length).toBeGreaterThanOrEqual(7);
    expect(BUILTIN_RUNBOOKS.length).toBeLessThanOrEqual(9);
    for (const rb of BUILTIN_RUNBOOKS) expect(runbookSpecSchema.parse(rb)).toEqual(rb);
  });

  it('has unique names, all at version 1.0.0', () => {
    const names = BUILTIN_RUNBOOKS.map((rb) => rb.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(BUILTIN_RUNBOOKS.map((rb) => rb.version))).toEqual(new Set(['1.0.0']));
  });

  it('covers every non-custom category', () => {
    const covered = new Set(BUILTIN_RUNBOOKS.map((rb) => rb.category));
    for (const c of ['oomkill', 'crashloop', 'latency', 'scaling', 'disk', 'network'] as const)
      expect(covered).toContain(c);
  });

  it('matches each runbook category to the category of the signals it targets', () => {
    for (const rb of BUILTIN_RUNBOOKS) {
      for (const s of rb.targets.signalTypes) {
        // ImagePullBackOff has no category of its own; its runbook is filed under crashloop.
        if (s !== 'ImagePullBackOff') expect([rb.name, categoryForSignal(s)]).toEqual([rb.name, rb.category]);
      }
    }
  });

  it('includes the documented runbooks', () => {
    const byName = new Map(BUILTIN_RUNBOOKS.map((rb) => [rb.name, rb]));
    const oom = byName.get('oomkill-raise-memory-limit');
    expect(oom?.steps.map((s) => s.type)).toEqual(['AdjustResources']);
    expect(oom?.targets.signalTypes).toEqual(['OOMKilled', 'HighMemory']);
    expect(byName.get('crashloop-restart')?.steps.map((s) => s.type)).toEqual(['RestartDeployment']);
    expect(byName.get('crashloop-rollback')?.approvalRequired).toBe(true);
    expect(byName.has('crashloop-restart-then-rollback')).toBe(false);
    expect(byName.get('imagepull-rollback')?.targets.signalTypes).toEqual(['ImagePullBackOff']);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(BUILTIN_RUNBOOKS)).toBe(true);
  });
});

describe('runbookSpecSchema', () => {
  it('fills defaults', () => {
    const parsed = runbookSpecSchema.parse(spec());
    expect(parsed).toMatchObject({
      automated: true,
      approvalRequired: false,
      maxAttempts: 3,
      targets: { signalTypes: [], resourceKinds: [] },
    });
  });

  it('accepts one valid example of every action type', () => {
    const steps = [
      {
        type: 'RestartDeployment',
        params: { deployment: 'api', namespace: 'prod' },
      },
      { type: 'ScaleDeployment', params: { replicas: 0 } },
      {
        type: 'AdjustResources',
        params: {
          container: 'app',
          memoryLimit: '512Mi',
          cpuLimitIncreasePercent: 25,
        },
      },
      { type: 'RollbackDeployment', params: { toRevision: 3 } },
      {
        type: 'DeletePod',
        params: { labelSelector: 'app=web,tier in (frontend)' },
      },
      {
        type: 'HttpRequest',
        params: {
          url: 'https://example.com/hook',
          method: 'POST',
          body: '{}',
          expectStatus: 202,
        },
      },
      { type: 'RunScript', params: { script: 'echo hi', timeout: '1m30s' } },
      { type: 'Wait', params: { duration: '1h2m3.5s' }, description: 'pause' },
      { type: 'Notify', params: { channel: 'pagerduty', message: 'hello' } },
    ];
    const parsed = runbookSpecSchema.parse(spec({ steps }));
    expect(parsed.steps.map((s) => s.type)).toEqual(ACTION_TYPES);
    expect(parsed.steps[5]).toMatchObject({ params: { method: 'POST' } });
    // method defaults to GET
    expect(
      actionSchema.parse({
        type: 'HttpRequest',
        params: { url: 'http://x.test' },
      }),
    ).toEqual({
      type: 'HttpRequest',
      params: { url: 'http://x.test', method: 'GET' },
    });
  });

  it('has one union member per ACTION_TYPES entry', () => {
    expect([...actionSchema.optionsMap.keys()].sort()).toEqual([...ACTION_TYPES].sort());
  });

  it.each(['1.0.0', '0.1.0-alpha.1', '2.3.4+build.5', '1.0.0-rc.1+sha.abc'])('accepts version %s', (v) => {
    expect(SEMVER_RE.test(v)).toBe(true);
    expect(runbookSpecSchema.safeParse(spec({ version: v })).success).toBe(true);
  });

  it.each(['1.0', 'v1.0.0', '01.0.0', '1.0.0-', '1.0.0-01', ''])('rejects version %j', (v) => {
    expect(SEMVER_RE.test(v)).toBe(false);
    expectIssue(spec({ version: v }), ['version'], /semantic version/);
  });

  it.each(['Bad', '-x', 'x-', 'a_b', 'a.b', '', 'a'.repeat(64)])('rejects name %j', (name) => {
    expectIssue(spec({ name }), ['name']);
  });

  it('accepts a 63-character name', () => {
    expect(runbookSpecSchema.safeParse(spec({ name: 'a'.repeat(63) })).success).toBe(true);
  });

  it('rejects an unknown action type at steps.N.type', () => {
    expectIssue(
      spec({
        steps: [
          { type: 'Wait', params: { duration: '1s' } },
          { type: 'Reboot', params: {} },
        ],
      }),
      ['steps', 1, 'type'],
      /discriminator/,
    );
  });

  it('rejects unknown params keys, naming the key', () => {
    expectIssue(
      step('Wait', { duration: '1s', durration: '2s' }),
      ['steps', 0, 'params'],
      /Unrecognized key.*durration/,
    );
    expectIssue(step('RestartDeployment', { deploymnet: 'api' }), ['steps', 0, 'params'], /deploymnet/);
  });

  it('rejects unknown keys on the action and the spec', () => {
    expectIssue(
      spec({
        steps: [{ type: 'Wait', params: { duration: '1s' }, retries: 2 }],
      }),
      ['steps', 0],
      /retries/,
    );
    expectIssue(spec({ step: [] }), [], /step/);
  });

  it('requires replicas or replicasDelta for ScaleDeployment', () => {
    expectIssue(step('ScaleDeployment', {}), ['steps', 0, 'params'], /replicas.*replicasDelta/);
    expectIssue(step('ScaleDeployment', { maxReplicas: 5 }), ['steps', 0, 'params'], /required/);
    expectIssue(
      step('ScaleDeployment', { replicas: 2, replicasDelta: 1 }),
      ['steps', 0, 'params'],
      /mutually exclusive/,
    );
    expectIssue(step('ScaleDeployment', { replicas: 1001 }), ['steps', 0, 'params', 'replicas']);
    expectIssue(step('ScaleDeployment', { replicas: 1.5 }), ['steps', 0, 'params', 'replicas']);
    expectIssue(
      step('ScaleDeployment', { replicas: 8, maxReplicas: 5 }),
      ['steps', 0, 'params', 'replicas'],
      /maxReplicas/,
    );
    expectIssue(step('ScaleDeployment', { replicasDelta: 0 }), ['steps', 0, 'params', 'replicasDelta']);
    expect(runbookSpecSchema.safeParse(step('ScaleDeployment', { replicasDelta: -2 })).success).toBe(true);
  });

  it('validates AdjustResources', () => {
    expectIssue(step('AdjustResources', { container: 'app' }), ['steps', 0, 'params'], /at least one/);
    expectIssue(step('AdjustResources', { memoryLimit: '512MB' }), ['steps', 0, 'params', 'memoryLimit'], /quantity/);
    expectIssue(step('AdjustResources', { memoryLimitIncreasePercent: 501 }), [
      'steps',
      0,
      'params',
      'memoryLimitIncreasePercent',
    ]);
    expectIssue(
      step('AdjustResources', { cpuLimit: '1', cpuLimitIncreasePercent: 10 }),
      ['steps', 0, 'params'],
      /mutually exclusive/,
    );
  });

  it('validates the other action params', () => {
    expectIssue(step('RollbackDeployment', { toRevision: 0 }), ['steps', 0, 'params', 'toRevision']);
    expectIssue(step('RestartDeployment', { namespace: 'Prod' }), ['steps', 0, 'params', 'namespace']);
    expectIssue(
      step('DeletePod', { pod: 'web-0', labelSelector: 'app=web' }),
      ['steps', 0, 'params'],
      /mutually exclusive/,
    );
    expectIssue(step('HttpRequest', { url: 'ftp://example.com' }), ['steps', 0, 'params', 'url'], /http/);
    expectIssue(step('HttpRequest', { url: 'https://x.test', method: 'PATCH' }), ['steps', 0, 'params', 'method']);
    expectIssue(step('HttpRequest', { url: 'https://x.test', body: 'x' }), ['steps', 0, 'params', 'body'], /GET/);
    expectIssue(step('HttpRequest', { url: 'https://x.test', expectStatus: 600 }), [
      'steps',
      0,
      'params',
      'expectStatus',
    ]);
    expectIssue(step('RunScript', { script: '' }), ['steps', 0, 'params', 'script']);
    expectIssue(step('RunScript', { script: 'x'.repeat(10_001) }), ['steps', 0, 'params', 'script']);
    expectIssue(step('RunScript', { script: 'ls', timeout: '10' }), ['steps', 0, 'params', 'timeout'], /Go duration/);
    expectIssue(step('Wait', { duration: '2 minutes' }), ['steps', 0, 'params', 'duration'], /Go duration/);
    expectIssue(step('Wait', { duration: '0s' }), ['steps', 0, 'params', 'duration'], /positive/);
    expectIssue(step('Wait', {}), ['steps', 0, 'params', 'duration'], /Required/);
    expectIssue(step('Notify', { channel: 'email', message: 'x' }), ['steps', 0, 'params', 'channel']);
    expectIssue(step('Notify', { channel: 'chat', message: '' }), ['steps', 0, 'params', 'message']);
  });

  it('requires 1..50 steps', () => {
    expectIssue(spec({ steps: [] }), ['steps'], /at least one step/);
    const wait = { type: 'Wait', params: { duration: '1s' } };
    expectIssue(spec({ steps: Array(51).fill(wait) }), ['steps'], /at most 50/);
    expect(runbookSpecSchema.safeParse(spec({ steps: Array(50).fill(wait) })).success).toBe(true);
  });

  it('validates severity, targets, category, description and maxAttempts', () => {
    expectIssue(spec({ severity: [] }), ['severity'], /at least one/);
    expectIssue(spec({ severity: ['high', 'urgent'] }), ['severity', 1]);
    expectIssue(spec({ severity: ['high', 'low', 'high'] }), ['severity', 2], /duplicate/);
    expectIssue(spec({ targets: { signalTypes: ['OOMKilled', 'Meltdown'] } }), ['targets', 'signalTypes', 1]);
    expectIssue(spec({ targets: { resourceKinds: ['CronJob'] } }), ['targets', 'resourceKinds', 0]);
    expectIssue(spec({ category: 'memory' }), ['category']);
    expectIssue(spec({ description: '' }), ['description']);
    expectIssue(spec({ description: 'x'.repeat(2001) }), ['description']);
    expectIssue(spec({ maxAttempts: 0 }), ['maxAttempts']);
    expectIssue(spec({ maxAttempts: 11 }), ['maxAttempts']);
  });
});

describe('runbookUpdateSchema', () => {
  it('is the spec without name', () => {
    const { name: _name, ...body } = spec();
    const { name: _full, ...expected } = runbookSpecSchema.parse(spec());
    expect(runbookUpdateSchema.parse(body)).toEqual(expected);
    // A body that repeats the name is rejected rather than silently renaming nothing.
    expectIssue(spec(), [], /name/, runbookUpdateSchema);
    expectIssue({ ...body, version: '1.0' }, ['version'], /semantic version/, runbookUpdateSchema);
  });
});

describe('categoryForSignal', () => {
  const table: [SignalType, RunbookCategory][] = [
    ['OOMKilled', 'oomkill'],
    ['HighMemory', 'oomkill'],
    ['CrashLoopBackOff', 'crashloop'],
    ['PodNotReady', 'crashloop'],
    ['DeploymentFailing', 'crashloop'],
    ['HighLatency', 'latency'],
    ['HighErrorRate', 'latency'],
    ['HighCPU', 'scaling'],
    ['DiskPressure', 'disk'],
    ['NetworkUnavailable', 'network'],
    ['ImagePullBackOff', 'custom'],
    ['Custom', 'custom'],
  ];

  it.each(table)('%s -> %s', (signal, category) => {
    expect(categoryForSignal(signal)).toBe(category);
  });

  it('covers every signal type with a known category', () => {
    expect(table.map(([s]) => s).sort()).toEqual([...SIGNAL_TYPES].sort());
    for (const s of SIGNAL_TYPES) expect(RUNBOOK_CATEGORIES).toContain(categoryForSignal(s));
  });
});
