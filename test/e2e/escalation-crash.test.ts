import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { useNotificationReceiver } from '../harness/notification-receiver';
import { killAll, runCli, survivors, until } from '../harness/processes';
import { useSplitStack, type SplitStack } from '../harness/split-stack';

/**
 * The escalation ladder under kill -9 of the worker (issue 11 §3), end to end: the Temporal dev
 * server in real time, `foghorn api` and `foghorn worker` as processes, the policy provisioned
 * from FOGHORN_ESCALATION_FILE at start. The worker dies between L1 and L2: L2 still fires once,
 * when its durable timer says, and L1 is not sent again. A bad file stops the process at start
 * with one line per problem.
 */

jest.setTimeout(10 * 60_000);

const L2_AFTER_MS = 20_000;

let stack: SplitStack;
let receiver: Awaited<ReturnType<typeof useNotificationReceiver>>;
let dataDir: string;

beforeAll(async () => {
  receiver = await useNotificationReceiver();
  dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-escalation-crash-'));
  const file = path.join(dataDir, 'escalation.yaml');
  writeFileSync(
    file,
    [
      'policies:',
      '  - name: crash-ladder',
      '    match: { namespaces: [crash] }',
      '    levels:',
      `      - targets: [{ channel: slack, url: "${receiver.url('/slack/l1')}" }]`,
      `        escalateAfter: ${L2_AFTER_MS / 1000}s`,
      `      - targets: [{ channel: slack, url: "${receiver.url('/slack/l2')}" }]`,
      '',
    ].join('\n'),
  );
  stack = await useSplitStack(dataDir, {
    FOGHORN_ESCALATION_FILE: file,
    FOGHORN_LLM_BASE_URL: '',
    FOGHORN_STT: '',
    FOGHORN_WEBHOOK_HOME_CHANNEL: '',
  });
}, 600_000);

afterAll(async () => {
  try {
    await stack?.stop();
  } finally {
    await killAll();
    await receiver?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  expect(await survivors()).toEqual([]);
}, 180_000);

it('a worker killed between L1 and L2: L2 fires once, on its timer, and L1 is not repeated', async () => {
  const provisioned = await stack.call('GET', '/escalation-policies/crash-ladder');
  expect(provisioned.body).toMatchObject({ metadata: { name: 'crash-ladder' } });

  const res = await stack.call('POST', '/incidents', {
    resource: 'Deployment/payments',
    namespace: 'crash',
    signalType: 'Custom',
    severity: 'critical',
    description: 'the ladder must survive its worker',
  });
  expect(res.status).toBe(201);
  const incident: string = res.body.metadata.name;

  // Between two levels: L1 delivered and recorded (a kill between a POST and its record would
  // send L1 again, under the same Idempotency-Key: at-least-once, as any webhook sender).
  await until('L1 at the receiver', () => receiver.accepted('/slack/l1').length > 0, 300_000, stack.output);
  const l1At = Date.now();
  await until('L1 on the timeline', async () => (await levelsNotified(incident)).includes(1), 60_000, stack.output);
  await stack.crashWorker();
  await stack.startWorker();

  await until('L2 at the receiver', () => receiver.accepted('/slack/l2').length > 0, 300_000, stack.output);
  // Not early: the timer started when L1 went out.
  expect(Date.now() - l1At).toBeGreaterThan(L2_AFTER_MS - 5_000);
  expect(receiver.accepted('/slack/l2')[0].body.text).toContain(incident);

  // Once: give a duplicate every chance to show up (another ladder timer would be L2's again).
  const settle = Date.now() + 10_000;
  await until('a settled ladder', () => Date.now() > settle, 20_000);
  expect(receiver.accepted('/slack/l2')).toHaveLength(1);
  expect(receiver.accepted('/slack/l1')).toHaveLength(1);

  await until('L2 on the timeline', async () => (await levelsNotified(incident)).includes(2), 60_000, stack.output);
  expect(await levelsNotified(incident)).toEqual([1, 2]);
});

/** The levels of the incident's `Notification` events, in timeline order. */
async function levelsNotified(incident: string): Promise<(number | undefined)[]> {
  const timeline = (await stack.call('GET', `/incidents/${incident}/timeline`)).body.events as {
    type: string;
    details?: { level?: number };
  }[];
  return timeline.filter((e) => e.type === 'Notification').map((e) => e.details?.level);
}

it('a bad escalation file stops the process at start with one line per problem, naming each field', async () => {
  const bad = path.join(dataDir, 'bad.yaml');
  writeFileSync(
    bad,
    [
      'policies:',
      '  - name: Bad Name',
      '    levels:',
      '      - targets: [{ channel: pager }]',
      '        escalateAfter: soon',
      '',
    ].join('\n'),
  );
  const { code, output } = await runCli(['api'], {
    FOGHORN_ESCALATION_FILE: bad,
    FOGHORN_DATA_DIR: dataDir,
    MONGODB_URI: 'mongodb://127.0.0.1:1/never',
    FOGHORN_LOG_LEVEL: 'warn',
  });
  expect(code).not.toBe(0);
  expect(output).toContain('policies.0.name');
  expect(output).toContain('policies.0.levels.0.targets.0');
  expect(output).toContain('policies.0.levels.0.escalateAfter');
});
