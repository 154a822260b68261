import pino from 'pino';
import { Writable } from 'stream';
import type { temporal } from '@temporalio/proto';
import { warnWhenNobodyIsPaged } from '../../cli/services';
import { parseConfig } from '../../config/env';
import { runbookSpecSchema } from '../../contracts/runbooks';
import type { RunbookInput } from '../../domain/runbook';
import { createRunbook, deleteRunbook } from '../../store/runbooks';
import { REMEDIATION_BUDGET_PATCH } from '../../workflows/incident/budget';
import { approvalAwaitingDecision } from '../harness/approvals';
import { useNotificationReceiver } from '../harness/notification-receiver';
import { freePort } from '../harness/ports';
import { useStack } from '../harness/stack';

/**
 * A bounded time to a human (docs/escalation.md, "The remediation budget"), on the time-skipping
 * test server with the real activities: a real HTTP listener stands in for Slack and webhook
 * receivers, and a local port nobody listens on for a service that refuses connections.
 * Incidents are `Custom` signals of an unregistered cluster: only the tests' HTTP runbooks run.
 * No FOGHORN_WEBHOOK_HOME_CHANNEL: an incident no policy matches pages nobody.
 */

jest.setTimeout(300_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const MINUTE = 60_000;
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('budget-test-signing-secret-0123!!').toString('base64');

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useNotificationReceiver>>;
/** A service that refuses connections: nothing listens there. */
let refused = '';

beforeAll(async () => {
  receiver = await useNotificationReceiver();
  refused = `http://127.0.0.1:${await freePort()}`;
  s = await useStack();
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;
const plans = async (name: string): Promise<Json[]> => (await get(`/remediations?incident=${name}`)).body.items;
const stateOf = async (name: string): Promise<string> => (await get(`/incidents/${name}`)).body.status?.state;
const history = async (id: string): Promise<HistoryEvent[]> =>
  (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
const escalated = (n: { body: Json }) => n.body.type === 'incident.escalated';

async function policy(body: Json): Promise<void> {
  const res = await s.call('POST', '/escalation-policies', { token: s.tokens.admin, body });
  expect(res.status).toBe(201);
}

async function runbook(input: Omit<RunbookInput, 'version' | 'description' | 'category'>): Promise<void> {
  const spec = runbookSpecSchema.parse({ version: '1.0.0', description: 'budget test', category: 'custom', ...input });
  expect((await createRunbook(spec)).created).toBe(true);
}

async function open(namespace: string, severity: string, resource = 'Deployment/api'): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: { resource, namespace, signalType: 'Custom', severity, description: 'budget test' },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

/** Skips workflow time, 30 s at a time, until `done` (checked between skips); how much was skipped. */
async function skipUntil(done: () => Promise<boolean>, atMostMs: number, what: string): Promise<number> {
  let skipped = 0;
  while (!(await done())) {
    if (skipped >= atMostMs) throw new Error(`${what}: not after ${skipped / MINUTE}m of workflow time`);
    await s.wf.env.sleep(30_000);
    skipped += 30_000;
  }
  return skipped;
}

/** Waits (real time, the workflow clock still) until `check` holds. */
const until = <T>(fn: () => Promise<T>, check: (v: T) => boolean) => s.eventually(fn, check, 60_000);

/** When the run recorded the budget's patch (it moved to Remediating then), in workflow time. */
function budgetStartedAt(events: HistoryEvent[]): number {
  const marker = events.find((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data && (JSON.parse(Buffer.from(data).toString()) as { id: string }).id === REMEDIATION_BUDGET_PATCH;
  });
  if (!marker) throw new Error('the run recorded no remediation budget');
  return ms(marker.eventTime);
}

/** When the run started its escalation ladder, in workflow time (each start). */
const laddersStartedAt = (events: HistoryEvent[]): number[] =>
  events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).map((e) => ms(e.eventTime));

/** The scheduleToClose bound of each HttpRequest step's activity, in order. */
const httpStepBounds = (events: HistoryEvent[]): number[] =>
  events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === 'runHttpPlanStep' ? [ms(a.scheduleToCloseTimeout)] : [];
  });

describe('when nothing would page', () => {
  /** A real pino logger writing JSON lines into memory, as the worker's does to stdout. */
  function capture() {
    const lines: Json[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    return { logger: pino({ level: 'info' }, sink), lines };
  }

  it('the worker warns once at start-up that approvals and escalations page nobody, naming what is missing', async () => {
    const config = parseConfig({});
    const nothing = capture();
    const missing = await warnWhenNobodyIsPaged(config, nothing.logger);
    expect(nothing.lines).toHaveLength(1);
    expect(nothing.lines[0]).toMatchObject({ level: 40, missing });
    expect(nothing.lines[0].msg).toBe(
      'no escalation policy matches any incident, and the built-in default that takes them pages at level 1 only the chat home channel, which is not set (FOGHORN_WEBHOOK_HOME_CHANNEL): approvals and escalations page nobody',
    );

    // A home channel: the built-in default pages it, nothing to say.
    const homed = capture();
    expect(
      await warnWhenNobodyIsPaged(parseConfig({ FOGHORN_WEBHOOK_HOME_CHANNEL: 'oncall-room' }), homed.logger),
    ).toEqual([]);
    expect(homed.lines).toEqual([]);

    // Policies that cover some incidents, and one that pages nobody: the rest is listed.
    await policy({
      name: 'warn-payments',
      match: { namespaces: ['payments'], severities: ['critical', 'high'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/warn') }] }],
    });
    await policy({ name: 'warn-quiet', match: { namespaces: ['dev'] }, levels: [] });
    try {
      const partly = capture();
      await warnWhenNobodyIsPaged(config, partly.logger);
      expect(partly.lines.map((l) => l.missing)).toEqual([
        [
          'no escalation policy matches critical and high incidents outside namespaces dev, payments, nor medium and low incidents outside namespaces dev, and the built-in default that takes them pages at level 1 only the chat home channel, which is not set (FOGHORN_WEBHOOK_HOME_CHANNEL)',
          'policy warn-quiet takes namespaces dev and has no levels',
        ],
      ]);
      expect(partly.lines[0].msg).toMatch(/: approvals and escalations page nobody$/);
    } finally {
      for (const name of ['warn-payments', 'warn-quiet'])
        await s.call('DELETE', `/escalation-policies/${name}`, { token: s.tokens.admin });
    }
  });
});

describe('the remediation budget', () => {
  it('a critical incident whose HTTP step meets a refused connection pages L1 after 10m while automation goes on; when automation gives up it is Escalated, L1 paged once', async () => {
    await policy({
      name: 'budget-critical',
      match: { namespaces: ['budget-a'] },
      levels: [
        { targets: [{ channel: 'slack', url: receiver.url('/slack/budget-a-l1') }], escalateAfter: '30m' },
        { targets: [{ channel: 'slack', url: receiver.url('/slack/budget-a-l2') }] },
      ],
    });
    await runbook({
      name: 'budget-refused',
      severity: ['critical'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${refused}/restart/{{deployment}}` } }],
    });
    try {
      const name = await open('budget-a', 'critical');
      await until(
        () => history(name),
        (events) => httpStepBounds(events).length === 1,
      );
      expect(await stateOf(name)).toBe('Remediating');
      // The step's retries end with the budget: no more than the 10m left when it started.
      const [firstBound] = httpStepBounds(await history(name));
      expect(firstBound).toBeLessThanOrEqual(10 * MINUTE);
      expect(firstBound).toBeGreaterThan(9 * MINUTE);

      // Nobody is paged before the budget runs out; then L1, at once.
      await skipUntil(
        async () => (await history(name)).some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes),
        11 * MINUTE,
        'the ladder',
      );
      const [page] = await receiver.waitFor('/slack/budget-a-l1', (n) => n.body.text.includes(name));
      expect(await stateOf(name)).toBe('Remediating');
      expect(page.body.text).toMatch(
        /remediation budget of 10m0s ran out while (plan RP-\d{8}-\d{3,} runs \(attempt [123] of 3\)|attempt [23] of 3 is prepared); automation continues/,
      );
      const events = await history(name);
      const [ladderAt] = laddersStartedAt(events);
      expect(ladderAt - budgetStartedAt(events)).toBeGreaterThanOrEqual(10 * MINUTE);
      expect(ladderAt - budgetStartedAt(events)).toBeLessThanOrEqual(10 * MINUTE + 30_000);
      const said = (await timeline(name)).find((e) => e.type === 'Escalation');
      expect(said).toMatchObject({ source: 'escalation-engine' });
      expect(said.message).toMatch(
        /^Remediation budget of 10m0s ran out while .*; automation continues; the incident stays Remediating and escalation policy budget-critical pages its level 1 now$/,
      );
      expect((await get(`/incidents/${name}`)).body.spec.escalationPolicy).toBe('budget-critical');

      // Automation goes on: the later attempts' steps get a minute each, then it gives up.
      await skipUntil(async () => (await stateOf(name)) === 'Escalated', 10 * MINUTE, 'Escalated');
      const all = await plans(name);
      expect(all.map((p) => p.state)).toEqual(['Failed', 'Failed', 'Failed']);
      const after = await history(name);
      expect(httpStepBounds(after).slice(1)).toEqual([MINUTE, MINUTE]);
      expect(laddersStartedAt(after)).toHaveLength(1);
      // The ladder heard why it pages on, and pages nobody twice for L1.
      const ladderEvents = await history(`${name}-escalation`);
      expect(
        ladderEvents.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'reason'),
      ).toHaveLength(1);
      await s.wf.env.sleep(MINUTE);
      expect(receiver.accepted('/slack/budget-a-l1').filter((n) => n.body.text.includes(name))).toHaveLength(1);
      expect(receiver.accepted('/slack/budget-a-l2')).toHaveLength(0);
      const moves = (await timeline(name)).filter((e) => e.type === 'Escalation').map((e) => e.message);
      expect(moves).toEqual([said.message, expect.stringMatching(/; escalated to on-call$/)]);

      // A person resolves: the ladder is told and ends.
      const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=budget-a`, {
        token: s.tokens.operator,
        body: { resolution: 'restarted by hand' },
      });
      expect(resolved.status).toBe(200);
      await until(
        async () => (await s.client.workflow.getHandle(`${name}-escalation`).describe()).status.name,
        (status) => status === 'COMPLETED',
      );
    } finally {
      await deleteRunbook('budget-refused');
    }
  });

  it('the ladder the budget started hears the resolve of a plan verified after it: its webhook hears incident.resolved', async () => {
    await policy({
      name: 'budget-late-fix',
      match: { namespaces: ['budget-late'] },
      levels: [{ targets: [{ channel: 'webhook', url: receiver.url('/hooks/budget-late'), secret: WEBHOOK_SECRET }] }],
    });
    // The fix takes 11 minutes (a Wait), then answers 200; verified 2 minutes later.
    await runbook({
      name: 'budget-slow-fix',
      severity: ['critical'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['StatefulSet'] },
      steps: [
        { type: 'Wait', params: { duration: '11m' } },
        { type: 'HttpRequest', params: { method: 'POST', url: receiver.url('/fix/{{resourceName}}') } },
      ],
    });
    try {
      const name = await open('budget-late', 'critical', 'StatefulSet/db');
      await until(stateOf.bind(null, name), (state) => state === 'Remediating');
      await skipUntil(async () => receiver.accepted('/hooks/budget-late').some(escalated), 11 * MINUTE, 'L1');
      const [page] = receiver.accepted('/hooks/budget-late').filter(escalated);
      expect(page.body).toMatchObject({ type: 'incident.escalated', level: 1 });
      expect(page.body.message).toMatch(/ran out while plan RP-\S+ runs \(attempt 1 of 3\); automation continues$/);
      expect(page.body.incident.state).toBe('Remediating');
      expect(receiver.verify(page, WEBHOOK_SECRET)).toBe(true);

      await skipUntil(async () => (await stateOf(name)) === 'Resolved', 6 * MINUTE, 'Resolved');
      const detail = (await get(`/incidents/${name}`)).body;
      expect(detail.status.resolution).toMatch(/^Remediated automatically by plan RP-/);
      const [done] = await receiver.waitFor('/hooks/budget-late', (n) => n.body.type === 'incident.resolved');
      expect(done.body.incident.name).toBe(name);
      await until(
        async () => (await s.client.workflow.getHandle(`${name}-escalation`).describe()).status.name,
        (status) => status === 'COMPLETED',
      );
      await s.client.workflow.getHandle(name).result();
      expect(receiver.accepted('/hooks/budget-late').filter(escalated)).toHaveLength(1);
    } finally {
      await deleteRunbook('budget-slow-fix');
    }
  });

  it('a plan verified before its budget ends pages nobody, and the budget does not keep the resolved incident open', async () => {
    await policy({
      name: 'budget-quick-fix',
      match: { namespaces: ['budget-b'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/budget-b') }] }],
    });
    await runbook({
      name: 'budget-fix',
      severity: ['high'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['DaemonSet'] },
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: receiver.url('/fix/{{resourceName}}') } }],
    });
    try {
      const name = await open('budget-b', 'high', 'DaemonSet/agent');
      await until(stateOf.bind(null, name), (state) => state === 'Remediating');
      await skipUntil(async () => (await stateOf(name)) === 'Resolved', 5 * MINUTE, 'Resolved');
      await s.client.workflow.getHandle(name).result(); // completed: nothing of the budget holds it
      const events = await history(name);
      const timer = events.find((e) => e.timerStartedEventAttributes);
      expect(ms(timer?.timerStartedEventAttributes?.startToFireTimeout)).toBe(20 * MINUTE); // high: 20m
      expect(
        events.some((e) => e.timerCanceledEventAttributes?.timerId === timer?.timerStartedEventAttributes?.timerId),
      ).toBe(true);
      expect(laddersStartedAt(events)).toEqual([]);
      await s.wf.env.sleep(21 * MINUTE);
      expect(receiver.accepted('/slack/budget-b')).toHaveLength(0);
      expect((await timeline(name)).filter((e) => e.type === 'Escalation')).toEqual([]);
    } finally {
      await deleteRunbook('budget-fix');
    }
  });

  it("a budget from the incident's policy overrides the default, and bounds the steps", async () => {
    await policy({
      name: 'budget-short',
      match: { namespaces: ['budget-c'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/budget-c') }] }],
      remediationBudget: { medium: '3m' },
    });
    const shown = await get('/escalation-policies/budget-short');
    expect(shown.body.spec.remediationBudget).toEqual({ medium: '3m' });
    await runbook({
      name: 'budget-refused-medium',
      severity: ['medium'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['Node'] },
      steps: [{ type: 'HttpRequest', params: { method: 'PUT', url: `${refused}/drain/{{resourceName}}` } }],
    });
    try {
      const name = await open('budget-c', 'medium', 'Node/worker-7');
      await until(
        () => history(name),
        (events) => httpStepBounds(events).length === 1,
      );
      const [bound] = httpStepBounds(await history(name));
      expect(bound).toBeLessThanOrEqual(3 * MINUTE);
      expect(bound).toBeGreaterThan(2 * MINUTE);

      // Medium's default is 60m: the policy's 3m pages L1 after 3 minutes.
      await skipUntil(async () => laddersStartedAt(await history(name)).length > 0, 4 * MINUTE, 'the ladder');
      const [page] = await receiver.waitFor('/slack/budget-c', (n) => n.body.text.includes(name));
      expect(page.body.text).toMatch(/remediation budget of 3m0s ran out while .*; automation continues/);
      const events = await history(name);
      const waited = laddersStartedAt(events)[0] - budgetStartedAt(events);
      expect(waited).toBeGreaterThanOrEqual(3 * MINUTE);
      expect(waited).toBeLessThanOrEqual(3 * MINUTE + 30_000);
      expect(await stateOf(name)).toBe('Remediating');

      const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=budget-c`, {
        token: s.tokens.operator,
        body: { resolution: 'drained by hand' },
      });
      expect(resolved.status).toBe(200);
      await until(
        async () => (await s.client.workflow.getHandle(`${name}-escalation`).describe()).status.name,
        (status) => status === 'COMPLETED',
      );
    } finally {
      await deleteRunbook('budget-refused-medium');
    }
  });

  it('under a policy that pages nobody the budget running out is only said on the timeline; giving up ends Failed', async () => {
    await policy({
      name: 'budget-silent',
      match: { namespaces: ['budget-none'] },
      levels: [],
      remediationBudget: { low: '1m' },
    });
    await runbook({
      name: 'budget-refused-low',
      severity: ['low'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${refused}/scale/{{deployment}}` } }],
    });
    try {
      const name = await open('budget-none', 'low', 'Deployment/worker');
      const ranOut = async () =>
        (await timeline(name)).find((e) => e.type === 'Escalation' && /pages nobody$/.test(e.message));
      await skipUntil(async () => !!(await ranOut()), 2 * MINUTE, 'the budget');
      expect((await ranOut()).message).toMatch(
        /^Remediation budget of 1m0s ran out while .*; automation continues; the escalation policy budget-silent pages nobody$/,
      );
      expect(await stateOf(name)).toBe('Remediating');
      await skipUntil(async () => (await stateOf(name)) === 'Failed', 5 * MINUTE, 'Failed');
      expect(laddersStartedAt(await history(name))).toEqual([]);
      expect(receiver.requests.filter((r) => r.body?.incident?.name === name || r.body?.text?.includes(name))).toEqual(
        [],
      );
    } finally {
      await deleteRunbook('budget-refused-low');
    }
  });

  it("a plan waiting for approval pages its approvers at once: the policy's level 1, schedules resolved to who is on call", async () => {
    const now = Date.now();
    const schedule = await s.call('POST', '/oncall-schedules', {
      token: s.tokens.admin,
      body: {
        name: 'budget-oncall',
        start: new Date(now - 3_600_000).toISOString(),
        people: [{ name: 'carol', targets: [{ channel: 'slack', url: receiver.url('/slack/carol') }] }],
      },
    });
    expect(schedule.status).toBe(201);
    await policy({
      name: 'budget-approvers',
      match: { namespaces: ['budget-d'] },
      levels: [
        { targets: [{ channel: 'slack', url: receiver.url('/slack/approvers') }, { schedule: 'budget-oncall' }] },
        { targets: [{ channel: 'slack', url: receiver.url('/slack/approvers-l2') }] },
      ],
    });
    await runbook({
      name: 'budget-gated',
      severity: ['low'],
      approvalRequired: true,
      targets: { signalTypes: ['Custom'], resourceKinds: ['Pod'] },
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: receiver.url('/fix/{{resourceName}}') } }],
    });
    try {
      const name = await open('budget-d', 'low', 'Pod/api-0');
      const pending = await until(
        () => get(`/approvals?incident=${name}&status=pending`),
        (r) => r.body.items?.length === 1,
      );
      const approval: string = pending.body.items[0].name;
      // No workflow time passes: the announcement goes out as the approval is asked.
      const [asked] = await receiver.waitFor('/slack/approvers', (n) => n.body.text.includes(approval));
      const [carol] = await receiver.waitFor('/slack/carol', (n) => n.body.text.includes(approval));
      expect(asked.body.text).toContain(name);
      expect(carol.body.text).toContain(name);
      expect(receiver.accepted('/slack/approvers-l2')).toHaveLength(0);
      const notes = (await timeline(name)).filter((e) => e.type === 'Notification');
      expect(notes.map((e) => e.details)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ channel: 'slack', event: 'approval.requested' }),
          expect.objectContaining({ channel: 'slack', event: 'approval.requested', person: 'carol' }),
        ]),
      );

      await approvalAwaitingDecision(s.client, approval);
      const resolved = await s.call('POST', `/incidents/${name}/resolve?namespace=budget-d`, {
        token: s.tokens.operator,
        body: { resolution: 'not needed' },
      });
      expect(resolved.status).toBe(200);
      await s.client.workflow.getHandle(name).result();
    } finally {
      await deleteRunbook('budget-gated');
    }
  });
});
