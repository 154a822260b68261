import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { loadEscalationFile } from '../../cli/escalation-file';
import { ConfigError } from '../../config/env';
import {
  BUILTIN_DEFAULT_POLICY,
  choosePolicy,
  describeTarget,
  ladderOf,
  nextRung,
  type EscalationPolicy,
} from '../../domain/escalation-policy';
import {
  describeIssues,
  escalationFileSchema,
  escalationPolicySchema,
  type EscalationPolicyInput,
} from '../../contracts/escalation';

const ROUTING_KEY = 'R0uT1nGkEy0123456789abcdef012345';
const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/sEcReTtOkEn';
const PD_URL = 'https://events.pagerduty.com/v2/enqueue';

const policy = (input: Partial<EscalationPolicyInput> & { name: string }): EscalationPolicy =>
  escalationPolicySchema.parse({ levels: [{ targets: [{ channel: 'chat' }] }], ...input });

/** The one-line problems a file's content gets. */
function problems(file: unknown): string[] {
  const result = escalationFileSchema.safeParse(file);
  if (result.success) throw new Error('expected the file to be refused');
  return describeIssues(result.error);
}

describe('escalationFileSchema', () => {
  it('accepts a complete file and applies the defaults', () => {
    const file = escalationFileSchema.parse({
      policies: [
        {
          name: 'payments-critical',
          match: { namespaces: ['payments'], severities: ['critical'] },
          levels: [
            { targets: [{ channel: 'pagerduty', routingKey: ROUTING_KEY }], escalateAfter: '5m' },
            { targets: [{ schedule: 'primary' }] },
          ],
          repeat: { every: '30m', times: 3 },
        },
      ],
      schedules: [
        {
          name: 'primary',
          start: '2026-01-05T09:00:00Z',
          people: [{ name: 'alice', targets: [{ channel: 'slack', url: SLACK_URL }] }],
        },
      ],
      maintenanceWindows: [
        { name: 'db-upgrade', namespace: 'payments', from: '2026-02-01T00:00:00Z', to: '2026-02-01T02:00:00Z' },
      ],
    });
    expect(file.policies[0]).toMatchObject({ priority: 100, description: '' });
    expect(file.policies[0].levels[1].escalateAfter).toBe('5m');
    expect(file.schedules[0]).toMatchObject({ shift: '168h', overrides: [] });
    expect(file.maintenanceWindows[0].reason).toBe('');
    expect(escalationFileSchema.parse({})).toEqual({ policies: [], schedules: [], maintenanceWindows: [] });
  });

  it('names the field of every problem, one line each', () => {
    const lines = problems({
      policies: [
        { name: 'Bad Name', levels: [] },
        {
          name: 'p2',
          levels: [{ targets: [{ channel: 'pagerduty', routingKey: 'short' }], escalateAfter: 'soon' }],
          repeat: { every: '10s' },
        },
      ],
      schedules: [{ name: 's', start: 'monday', people: [{ name: 'a', targets: [{ channel: 'fax' }] }] }],
      unknown: true,
    });
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^policies\.0\.name: must be lowercase/),
        expect.stringMatching(/^policies\.1\.levels\.0\.targets\.0\.routingKey: must be a PagerDuty/),
        expect.stringMatching(/^policies\.1\.levels\.0\.escalateAfter: /),
        expect.stringMatching(/^schedules\.0\.start: must be an ISO 8601 timestamp/),
        expect.stringMatching(/^schedules\.0\.people\.0\.targets\.0/),
        expect.stringMatching(/^\(top level\): Unrecognized key.*unknown/),
      ]),
    );
    // No line quotes a secret the file held.
    expect(lines.join('\n')).not.toContain('short');
  });

  it('checks what spans entries: durations, duplicates, schedule references, overrides', () => {
    const lines = problems({
      policies: [
        {
          name: 'p',
          levels: [{ targets: [{ schedule: 'nobody' }], escalateAfter: '500ms' }],
          repeat: { every: '10s' },
        },
        { name: 'p', levels: [] },
      ],
      schedules: [
        {
          name: 's',
          start: '2026-01-05T09:00:00Z',
          shift: '30s',
          people: [
            { name: 'a', targets: [{ channel: 'chat' }] },
            { name: 'a', targets: [{ channel: 'chat' }] },
          ],
          overrides: [{ person: 'zed', from: '2026-01-06T00:00:00Z', to: '2026-01-05T00:00:00Z' }],
        },
      ],
    });
    expect(lines).toEqual(
      expect.arrayContaining([
        'policies.0.levels.0.escalateAfter: must be at least 1s',
        'policies.0.repeat.every: must be at least 1m',
        'policies.1.name: duplicate name p',
        'policies.0.levels.0.targets.0.schedule: no schedule named nobody in this file',
        'schedules.0.people: names must be unique',
        'schedules.0.shift: must be at least 1m',
        "schedules.0.overrides.0.person: must be one of the schedule's people",
        'schedules.0.overrides.0.to: must be after from',
      ]),
    );
  });

  it('refuses URLs that are not http(s) or carry credentials', () => {
    const target = (url: string) =>
      problems({ policies: [{ name: 'p', levels: [{ targets: [{ channel: 'slack', url }] }] }] });
    expect(target('not a url')).toEqual([
      'policies.0.levels.0.targets.0.url: must be a URL such as https://hooks.slack.com/services/…',
    ]);
    expect(target('ftp://hooks.example.com/x')).toEqual([
      'policies.0.levels.0.targets.0.url: must be an http or https URL',
    ]);
    expect(target('https://user:pw@hooks.example.com/x')).toEqual([
      'policies.0.levels.0.targets.0.url: must not carry a user or password',
    ]);
  });
});

describe('choosePolicy', () => {
  const incident = { namespace: 'payments', severity: 'critical' as const };

  it('takes the first policy whose match fits, in the given order', () => {
    const policies = [
      policy({ name: 'other-ns', match: { namespaces: ['shop'] } }),
      policy({ name: 'warnings', match: { severities: ['low'] } }),
      policy({ name: 'payments', match: { namespaces: ['payments'] } }),
      policy({ name: 'everything', match: { namespaces: ['*'] } }),
    ];
    expect(choosePolicy(policies, incident).name).toBe('payments');
    expect(choosePolicy(policies, { namespace: 'batch', severity: 'low' }).name).toBe('warnings');
    expect(choosePolicy(policies, { namespace: 'batch', severity: 'high' }).name).toBe('everything');
  });

  it('falls back to a stored default, else the built-in one; default is never matched by its match', () => {
    const storedDefault = policy({ name: 'default', match: { namespaces: ['nowhere'] } });
    const unrelated = policy({ name: 'shop', match: { namespaces: ['shop'] } });
    expect(choosePolicy([storedDefault, unrelated], incident)).toBe(storedDefault);
    expect(choosePolicy([unrelated], incident)).toBe(BUILTIN_DEFAULT_POLICY);
    expect(choosePolicy([], incident)).toBe(BUILTIN_DEFAULT_POLICY);
    // A policy with no match at all fits every incident.
    expect(choosePolicy([policy({ name: 'catch-all' }), storedDefault], incident).name).toBe('catch-all');
  });
});

describe('nextRung', () => {
  it('walks the built-in default: L1 → 5m → L2 → 10m → L3, L3 again every 30m', () => {
    const ladder = ladderOf(BUILTIN_DEFAULT_POLICY);
    expect(nextRung(ladder, { level: 0, attempt: 1 })).toEqual({ level: 1, attempt: 1, waitMs: 5 * 60_000 });
    expect(nextRung(ladder, { level: 1, attempt: 1 })).toEqual({ level: 2, attempt: 1, waitMs: 10 * 60_000 });
    expect(nextRung(ladder, { level: 2, attempt: 1 })).toEqual({ level: 2, attempt: 2, waitMs: 30 * 60_000 });
    expect(nextRung(ladder, { level: 2, attempt: 50 })).toEqual({ level: 2, attempt: 51, waitMs: 30 * 60_000 });
  });

  it('stops after `times` repeats, or at the last level without repeat', () => {
    const twice = ladderOf(policy({ name: 'p', repeat: { every: '1h', times: 2 } }));
    expect(nextRung(twice, { level: 0, attempt: 1 })).toEqual({ level: 0, attempt: 2, waitMs: 3_600_000 });
    expect(nextRung(twice, { level: 0, attempt: 2 })).toEqual({ level: 0, attempt: 3, waitMs: 3_600_000 });
    expect(nextRung(twice, { level: 0, attempt: 3 })).toBeUndefined();
    expect(nextRung(ladderOf(policy({ name: 'once' })), { level: 0, attempt: 1 })).toBeUndefined();
  });
});

describe('describeTarget', () => {
  it('shows the channel and the host, never a path, routing key or secret', () => {
    expect(describeTarget({ channel: 'slack', url: SLACK_URL }, PD_URL)).toEqual({
      channel: 'slack',
      target: 'hooks.slack.com',
    });
    expect(
      describeTarget(
        { channel: 'webhook', url: 'https://hooks.example.com:8443/in/abc', secret: 'whsec_0123456789abcdef' },
        PD_URL,
      ),
    ).toEqual({ channel: 'webhook', target: 'hooks.example.com:8443' });
    expect(
      describeTarget({ channel: 'pagerduty', routingKey: ROUTING_KEY }, 'http://127.0.0.1:9999/v2/enqueue'),
    ).toEqual({
      channel: 'pagerduty',
      target: '127.0.0.1:9999',
    });
    expect(describeTarget({ channel: 'chat' }, PD_URL)).toEqual({ channel: 'chat', target: 'home channel' });
    expect(describeTarget({ channel: 'chat', chatId: 'ops-room' }, PD_URL)).toEqual({
      channel: 'chat',
      target: 'ops-room',
    });
    expect(describeTarget({ schedule: 'primary' }, PD_URL)).toEqual({ channel: 'schedule', target: 'primary' });
  });
});

describe('loadEscalationFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'foghorn-escalation-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  /** The ConfigError's problems (and message) of loading `file`. */
  function refused(file: string): { problems: string[]; message: string } {
    try {
      loadEscalationFile(file);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return { problems: (err as ConfigError).problems, message: (err as Error).message };
    }
    throw new Error('expected loadEscalationFile to throw');
  }

  it('reads and validates a YAML file', () => {
    const file = write(
      'good.yaml',
      [
        'policies:',
        '  - name: payments',
        '    match: { namespaces: [payments] }',
        '    levels:',
        `      - targets: [{ channel: pagerduty, routingKey: ${ROUTING_KEY} }]`,
        '        escalateAfter: 2m',
        '      - targets: [{ schedule: primary }]',
        'schedules:',
        '  - name: primary',
        '    start: 2026-01-05T09:00:00Z',
        '    people:',
        `      - { name: alice, targets: [{ channel: slack, url: "${SLACK_URL}" }] }`,
      ].join('\n'),
    );
    const loaded = loadEscalationFile(file);
    expect(loaded.policies.map((p) => p.name)).toEqual(['payments']);
    expect(loaded.policies[0].levels[0]).toEqual({
      targets: [{ channel: 'pagerduty', routingKey: ROUTING_KEY }],
      escalateAfter: '2m',
    });
    expect(loaded.schedules[0].people[0].targets).toEqual([{ channel: 'slack', url: SLACK_URL }]);
    expect(loaded.maintenanceWindows).toEqual([]);
  });

  it('takes an empty file as no configuration', () => {
    expect(loadEscalationFile(write('empty.yaml', ''))).toEqual({
      policies: [],
      schedules: [],
      maintenanceWindows: [],
    });
  });

  it('lists every bad field, one line each naming the file and the field, quoting no value', () => {
    const file = write(
      'bad.yaml',
      [
        'policies:',
        '  - name: p',
        '    levels:',
        '      - targets: [{ channel: pagerduty, routingKey: not-a-key }]',
        '        escalateAfter: 10x',
        '      - targets: [{ schedule: missing }]',
        '    repeat: { every: 5s }',
      ].join('\n'),
    );
    const { problems: lines, message } = refused(file);
    const where = `FOGHORN_ESCALATION_FILE ${file}: `;
    expect(lines.every((l) => l.startsWith(where) && !l.includes('\n'))).toBe(true);
    expect(lines.map((l) => l.slice(where.length).split(':')[0]).sort()).toEqual([
      'policies.0.levels.0.escalateAfter',
      'policies.0.levels.0.targets.0.routingKey',
      'policies.0.levels.1.targets.0.schedule',
      'policies.0.repeat.every',
    ]);
    expect(message).toMatch(/^invalid configuration:\n {2}- /);
    expect(message).not.toContain('not-a-key');
  });

  it('reports the cross-entry problems once the entries are valid', () => {
    const file = write(
      'refs.yaml',
      [
        'policies:',
        '  - name: p',
        '    levels: [{ targets: [{ schedule: missing }] }]',
        '    repeat: { every: 5s }',
      ].join('\n'),
    );
    expect(refused(file).problems).toEqual([
      `FOGHORN_ESCALATION_FILE ${file}: policies.0.repeat.every: must be at least 1m`,
      `FOGHORN_ESCALATION_FILE ${file}: policies.0.levels.0.targets.0.schedule: no schedule named missing in this file`,
    ]);
  });

  it('names the line and column of a YAML syntax error, without quoting the file', () => {
    const file = write(
      'syntax.yaml',
      [
        'policies:',
        '  - name: p',
        `    levels: [{ targets: [{ channel: slack, url: "${SLACK_URL}" }]`,
        'schedules: []',
      ].join('\n'),
    );
    const { problems: lines, message } = refused(file);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(
      new RegExp(
        `^FOGHORN_ESCALATION_FILE ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line \\d+, column \\d+: YAML syntax error: `,
      ),
    );
    expect(message).not.toContain('sEcReTtOkEn');
  });

  it('refuses redefining the built-in policy none', () => {
    const file = write('none.yaml', 'policies:\n  - { name: none, levels: [] }\n');
    expect(refused(file).problems).toEqual([
      `FOGHORN_ESCALATION_FILE ${file}: policies.0.name: none is built in (nobody is paged) and cannot be redefined`,
    ]);
  });

  it('names the path of a file it cannot read, and why', () => {
    const file = path.join(dir, 'absent.yaml');
    expect(refused(file).problems).toEqual([`FOGHORN_ESCALATION_FILE ${file}: cannot read the file (ENOENT)`]);
  });
});
