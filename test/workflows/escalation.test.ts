import pino from 'pino';
import { Writable } from 'stream';
import type { temporal } from '@temporalio/proto';
import { warnWhenNobodyIsPaged } from '../../cli/services';
import { parseConfig } from '../../config/env';
import type { RunbookInput } from '../../domain/runbook';
import { REMEDIATION_BUDGET } from '../../workflows/patches';
import { freePort } from '../harness/ports';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook, deleteRunbook } from '../../store/runbooks';
import { deliveriesOf } from '../../store/notification-deliveries';
import { ladderStateQuery } from '../../workflows/escalation-messages';
import { ESCALATION_STATE } from '../../workflows/search-attributes';
import { approvalAwaitingDecision } from '../harness/approvals';
import { scheduledActivities } from '../harness/history';
import { useNotificationReceiver, type ReceivedNotification } from '../harness/notification-receiver';
import { useStack } from '../harness/stack';

/**
 * The escalation ladder and its notifiers (issue 11 §3), on the time-skipping test server: real
 * HTTP listeners stand in for Slack, PagerDuty's Events API v2, a generic webhook receiver and the
 * chat system; each scenario has its own namespace, so its policy is the one chosen. Incidents
 * are `Custom` signals of an unregistered cluster: no strategy runs, they escalate at once.
 * Time moves only when a test calls `s.wf.env.sleep`.
 */

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

const ROUTING_KEY = 'R0ut1ngKeyF0rTests000000000000aa';
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('escalation-test-signing-secret!!').toString('base64');
const SLACK_TOKEN_PATH = '/slack/T0001/B0001/xoxSecretToken42';
const MINUTE = 60_000;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useNotificationReceiver>>;

beforeAll(async () => {
  receiver = await useNotificationReceiver();
  s = await useStack({
    env: {
      FOGHORN_PAGERDUTY_URL: receiver.url('/pagerduty'),
      FOGHORN_WEBHOOK_HOME_CHANNEL: 'oncall-room',
      FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url('/chat'),
      FOGHORN_WEBHOOK_SECRET: 'chat-callback-secret-0123456789',
      FOGHORN_PUBLIC_URL: 'https://foghorn.example.com',
      FOGHORN_TEMPORAL_UI_URL: 'https://temporal.example.com',
    },
  });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;
const notifications = async (name: string) => (await timeline(name)).filter((e) => e.type === 'Notification');
const ladder = (name: string) => s.client.workflow.getHandle(`${name}-escalation`);
const ladderState = (name: string) => ladder(name).query(ladderStateQuery);
const resolve = (name: string, namespace: string) =>
  s.call('POST', `/incidents/${name}/resolve?namespace=${namespace}`, { token: s.tokens.operator, body: {} });

async function policy(body: Json): Promise<void> {
  const res = await s.call('POST', '/escalation-policies', { token: s.tokens.admin, body });
  expect(res.status).toBe(201);
}

async function open(namespace: string, severity = 'critical', deployment = 'api'): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: {
      resource: `Deployment/${deployment}`,
      namespace,
      signalType: 'Custom',
      severity,
      description: 'escalation test',
    },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

async function untilState(name: string, state: string): Promise<Json> {
  return (
    await s.eventually(
      () => get(`/incidents/${name}`),
      (r) => r.body.status?.state === state,
      60_000,
    )
  ).body;
}

const pagerDuty = (dedupKey: string, action?: string) => (n: ReceivedNotification) =>
  n.body.dedup_key === dedupKey && (!action || n.body.event_action === action);
const ofType = (type: string) => (n: ReceivedNotification) => n.body.type === type;

/** Waits until the ladder's query says `level` (the search attribute follows it). */
const untilLevel = (name: string, level: number, attempt = 1) =>
  s.eventually(
    () => ladderState(name),
    (l) => l.level === level && l.attempt === attempt,
  );

// ---------------------------------------------------------------------------------------------
// The remediation budget (docs/escalation.md, "The remediation budget"): a bounded time to a human
// ---------------------------------------------------------------------------------------------

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const BUDGET_WEBHOOK_SECRET = 'whsec_' + Buffer.from('budget-test-signing-secret-0123!!').toString('base64');
const plans = async (name: string): Promise<Json[]> => (await get(`/remediations?incident=${name}`)).body.items;
const stateOf = async (name: string): Promise<string> => (await get(`/incidents/${name}`)).body.status?.state;
const history = async (id: string): Promise<HistoryEvent[]> =>
  (await s.client.workflow.getHandle(id).fetchHistory()).events ?? [];
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
const escalated = (n: { body: Json }) => n.body.type === 'incident.escalated';

async function runbook(input: Omit<RunbookInput, 'version' | 'description' | 'category'>): Promise<void> {
  const spec = runbookSpecSchema.parse({ version: '1.0.0', description: 'budget test', category: 'custom', ...input });
  expect((await createRunbook(spec)).created).toBe(true);
}

async function openOn(namespace: string, severity: string, resource: string): Promise<string> {
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
    return data && (JSON.parse(Buffer.from(data).toString()) as { id: string }).id === REMEDIATION_BUDGET;
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

describe('the escalation ladder', () => {
  it('notifies L1 at once, L2 after 5m, L3 after 15m and L3 again every 30m, each in its channel format and on the timeline; resolve tells PagerDuty and the webhook and ends the ladder', async () => {
    await policy({
      name: 'ladder-critical',
      match: { namespaces: ['ladder'], severities: ['critical'] },
      levels: [
        {
          targets: [
            { channel: 'slack', url: receiver.url(SLACK_TOKEN_PATH) },
            { channel: 'pagerduty', routingKey: ROUTING_KEY },
          ],
          escalateAfter: '5m',
        },
        {
          targets: [{ channel: 'webhook', url: receiver.url('/hooks/ladder'), secret: WEBHOOK_SECRET }],
          escalateAfter: '10m',
        },
        { targets: [{ channel: 'slack', url: receiver.url('/slack/l3') }, { channel: 'chat' }] },
      ],
      repeat: { every: '30m' },
    });
    const name = await open('ladder');
    const detail = await untilState(name, 'Escalated');
    expect(detail.spec.escalationPolicy).toBe('ladder-critical');

    // L1 at once: Slack Block Kit and a PagerDuty trigger keyed by the incident name.
    const [slack] = await receiver.waitFor(SLACK_TOKEN_PATH);
    expect(slack.body.text).toContain(name);
    const blockTypes = slack.body.blocks.map((b: Json) => b.type);
    expect(blockTypes).toEqual(expect.arrayContaining(['header', 'section', 'actions']));
    const buttons = slack.body.blocks.find((b: Json) => b.type === 'actions').elements.map((e: Json) => e.url);
    expect(buttons).toEqual([
      `https://foghorn.example.com/api/v1/incidents/${name}`,
      `https://temporal.example.com/namespaces/default/workflows/${name}`,
    ]);
    const [trigger] = await receiver.waitFor('/pagerduty', pagerDuty(name, 'trigger'));
    expect(trigger.body).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: name,
      payload: {
        summary: expect.stringContaining(name),
        severity: 'critical',
        source: 'local/ladder',
        component: 'Deployment/api',
        custom_details: expect.objectContaining({ level: 1 }),
      },
    });
    await untilLevel(name, 1);
    expect(receiver.accepted('/hooks/ladder')).toHaveLength(0);

    // L2 after 5m, not before.
    await s.wf.env.sleep(4 * MINUTE);
    expect((await ladderState(name)).level).toBe(1);
    expect(receiver.accepted('/hooks/ladder')).toHaveLength(0);
    await s.wf.env.sleep(MINUTE);
    const [hook] = await receiver.waitFor('/hooks/ladder', ofType('incident.escalated'));
    expect(receiver.verify(hook, WEBHOOK_SECRET)).toBe(true);
    expect(hook.body).toMatchObject({
      type: 'incident.escalated',
      incident: { name, namespace: 'ladder', severity: 'critical', state: 'Escalated' },
      level: 2,
      at: expect.any(String),
    });
    expect(hook.headers['webhook-id']).toBeTruthy();

    // L3 ten minutes later (15m in all): Slack and the chat home channel.
    await s.wf.env.sleep(9 * MINUTE);
    expect((await ladderState(name)).level).toBe(2);
    await s.wf.env.sleep(MINUTE);
    await receiver.waitFor('/slack/l3');
    const [chat] = await receiver.waitFor('/chat', (n) => n.body.text?.includes(name));
    expect(chat.body).toMatchObject({ chat_id: 'oncall-room', kind: 'proactive' });
    await untilLevel(name, 3);
    const described = await ladder(name).describe();
    expect(described.typedSearchAttributes.get(ESCALATION_STATE)).toBe('L3');

    // L3 again every 30m.
    await s.wf.env.sleep(30 * MINUTE);
    await receiver.waitFor('/slack/l3', () => true, 2);
    await untilLevel(name, 3, 2);
    await s.wf.env.sleep(30 * MINUTE);
    await receiver.waitFor('/slack/l3', () => true, 3);
    // L1 and L2 were not repeated; the PagerDuty trigger went once.
    expect(receiver.accepted(SLACK_TOKEN_PATH)).toHaveLength(1);
    expect(receiver.accepted('/pagerduty').filter(pagerDuty(name, 'trigger'))).toHaveLength(1);

    // Every delivery is on the timeline with channel, target (host only), level and attempt. A note
    // is written after its delivery was received: wait for the notes themselves, not a count.
    const expected = [
      ['slack', 1, 1],
      ['pagerduty', 1, 1],
      ['webhook', 2, 1],
      ['slack', 3, 1],
      ['chat', 3, 1],
      ['slack', 3, 2],
      ['slack', 3, 3],
    ];
    const shownOf = (n: Awaited<ReturnType<typeof notifications>>) =>
      n.map((e) => JSON.stringify([e.details.channel, e.details.level, e.details.attempt]));
    const notes = await s.eventually(
      () => notifications(name),
      (n) => expected.every((t) => shownOf(n).includes(JSON.stringify(t))),
    );
    expect(shownOf(notes)).toEqual(expect.arrayContaining(expected.map((t) => JSON.stringify(t))));
    const slackNote = notes.find((e) => e.details.channel === 'slack' && e.details.level === 1);
    expect(slackNote.details.target).toBe(receiver.host);
    expect(notes.find((e) => e.details.channel === 'pagerduty').details.target).toBe(receiver.host);
    expect(notes.find((e) => e.details.channel === 'chat').details.target).toBe('oncall-room');

    // Resolve: PagerDuty resolves the same key, the webhook hears it, the ladder completes.
    const resolved = await resolve(name, 'ladder');
    expect(resolved.status).toBe(200);
    await receiver.waitFor('/pagerduty', pagerDuty(name, 'resolve'));
    const [closing] = await receiver.waitFor('/hooks/ladder', ofType('incident.resolved'));
    expect(receiver.verify(closing, WEBHOOK_SECRET)).toBe(true);
    await ladder(name).result();
    expect((await ladder(name).describe()).status.name).toBe('COMPLETED');

    // No secret anywhere Foghorn shows: timeline, policy views, delivery records.
    const exposed = JSON.stringify([
      await timeline(name),
      (await s.call('GET', '/escalation-policies/ladder-critical', { token: s.tokens.admin })).body,
      (await s.call('GET', '/escalation-policies', { token: s.tokens.admin })).body,
      await deliveriesOf(name),
    ]);
    for (const secret of ['xoxSecretToken42', ROUTING_KEY, WEBHOOK_SECRET, '/hooks/ladder'])
      expect(exposed).not.toContain(secret);
  });

  it('an acknowledge after L1 stops the climb: no L2, and PagerDuty hears acknowledge and resolve with the same key', async () => {
    await policy({
      name: 'ack-policy',
      match: { namespaces: ['ack'] },
      levels: [
        { targets: [{ channel: 'pagerduty', routingKey: ROUTING_KEY }], escalateAfter: '5m' },
        { targets: [{ channel: 'slack', url: receiver.url('/slack/ack-l2') }] },
      ],
    });
    const name = await open('ack', 'high');
    await receiver.waitFor('/pagerduty', pagerDuty(name, 'trigger'));
    const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'alice', message: 'looking' },
    });
    expect(ack.status).toBe(200);
    const [acked] = await receiver.waitFor('/pagerduty', pagerDuty(name, 'acknowledge'));
    expect(acked.body).toEqual({ routing_key: ROUTING_KEY, event_action: 'acknowledge', dedup_key: name });
    await s.eventually(
      () => ladderState(name),
      (l) => l.state === 'acknowledged',
    );

    await s.wf.env.sleep(20 * MINUTE);
    expect(receiver.accepted('/slack/ack-l2')).toHaveLength(0);
    expect((await ladderState(name)).level).toBe(1);

    expect((await resolve(name, 'ack')).status).toBe(200);
    const [resolved] = await receiver.waitFor('/pagerduty', pagerDuty(name, 'resolve'));
    expect(resolved.body).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: name });
    await ladder(name).result();
  });

  it('a snooze of 1h after L1 mutes the ladder for the hour; then it goes on where it was', async () => {
    await policy({
      name: 'snooze-policy',
      match: { namespaces: ['snooze'] },
      levels: [
        { targets: [{ channel: 'slack', url: receiver.url('/slack/snooze-l1') }], escalateAfter: '5m' },
        { targets: [{ channel: 'slack', url: receiver.url('/slack/snooze-l2') }] },
      ],
    });
    const name = await open('snooze', 'medium');
    await receiver.waitFor('/slack/snooze-l1');
    await untilLevel(name, 1);
    const snoozed = await s.call('POST', `/incidents/${name}/snooze`, {
      token: s.tokens.operator,
      body: { duration: '1h', reason: 'deploy in progress', snoozedBy: 'bob' },
    });
    expect(snoozed.status).toBe(200);
    await s.eventually(
      () => ladderState(name),
      (l) => l.state === 'snoozed',
    );

    await s.wf.env.sleep(59 * MINUTE);
    expect(receiver.accepted('/slack/snooze-l2')).toHaveLength(0);
    expect((await ladderState(name)).state).toBe('snoozed');
    // The hour ends; the ~5m left of L1 run out after it.
    await s.wf.env.sleep(2 * MINUTE);
    expect(receiver.accepted('/slack/snooze-l2')).toHaveLength(0);
    await s.wf.env.sleep(5 * MINUTE);
    await receiver.waitFor('/slack/snooze-l2');
    await untilLevel(name, 2);
    expect(receiver.accepted('/slack/snooze-l1')).toHaveLength(1);
  });
});

describe('choosing a policy', () => {
  it('policy none ends the incident Failed, with nobody paged', async () => {
    await policy({ name: 'sandbox-quiet', match: { namespaces: ['sandbox'] }, levels: [] });
    const name = await open('sandbox', 'critical');
    const detail = await untilState(name, 'Failed');
    expect(detail.spec.escalationPolicy).toBe('sandbox-quiet');
    const escalation = (await timeline(name)).find((e) => e.type === 'Escalation');
    expect(escalation.message).toContain('escalation policy is none');
    await expect(ladder(name).describe()).rejects.toThrow();
    // A person still closes it.
    expect((await resolve(name, 'sandbox')).status).toBe(200);
  });

  it('the first policy matching namespace and severity, by priority; the default otherwise', async () => {
    await policy({
      name: 'db-urgent',
      priority: 10,
      match: { namespaces: ['db'], severities: ['critical', 'high'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/db-urgent') }] }],
    });
    await policy({
      name: 'db-any',
      priority: 20,
      match: { namespaces: ['db'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/db-any') }] }],
    });
    const urgent = await open('db', 'high', 'primary');
    const routine = await open('db', 'low', 'replica');
    const elsewhere = await open('web', 'high', 'frontend');
    expect((await untilState(urgent, 'Escalated')).spec.escalationPolicy).toBe('db-urgent');
    expect((await untilState(routine, 'Escalated')).spec.escalationPolicy).toBe('db-any');
    expect((await untilState(elsewhere, 'Escalated')).spec.escalationPolicy).toBe('default');
    await receiver.waitFor('/slack/db-urgent', (n) => n.body.text.includes(urgent));
    await receiver.waitFor('/slack/db-any', (n) => n.body.text.includes(routine));
    // The built-in default: the chat home channel.
    await receiver.waitFor('/chat', (n) => n.body.text?.includes(elsewhere));
  });
});

describe('escalating in the triage', () => {
  const scheduled = async (workflowId: string) =>
    scheduledActivities((await s.client.workflow.getHandle(workflowId).fetchHistory()).events!);

  it('an incident with nothing to try is escalated by its triage, and L1 goes out without reading its endpoints again', async () => {
    await policy({
      name: 'triage-escalates',
      match: { namespaces: ['ledger'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/ledger') }] }],
    });
    const name = await open('ledger');
    expect((await untilState(name, 'Escalated')).spec.escalationPolicy).toBe('triage-escalates');
    await receiver.waitFor('/slack/ledger', (n) => n.body.text.includes(name));
    await s.eventually(
      () => notifications(name),
      (events) => events.length === 1,
    );

    // No activity of its own for the policy or the move; the ladder's only one is the delivery.
    // (Nor for the look into its inbox: the triage takes it.)
    expect(await scheduled(name)).toEqual(['drainAndTriage']);
    expect(await scheduled(`${name}-escalation`)).toEqual(['deliverNotification']);
    const events = await timeline(name);
    const escalation = events.findIndex((e) => e.type === 'Escalation');
    expect(events[escalation]).toMatchObject({
      source: 'escalation-engine',
      message: 'No automatic remediation strategy is available; escalated to on-call',
    });
    expect(events.findIndex((e) => e.type === 'Notification')).toBeGreaterThan(escalation);
    expect(await ladderState(name)).toMatchObject({ level: 1, state: 'exhausted' });
  });
});

describe('on-call schedules and maintenance windows', () => {
  it('a level naming a schedule pages whoever is on call now (an override wins)', async () => {
    const now = Date.now();
    const res = await s.call('POST', '/oncall-schedules', {
      token: s.tokens.admin,
      body: {
        name: 'payments-primary',
        start: new Date(now - 2 * 3600_000).toISOString(),
        shift: '168h',
        people: [
          { name: 'alice', targets: [{ channel: 'slack', url: receiver.url('/slack/alice') }] },
          { name: 'bob', targets: [{ channel: 'slack', url: receiver.url('/slack/bob') }] },
        ],
        overrides: [
          { person: 'bob', from: new Date(now - 600_000).toISOString(), to: new Date(now + 3600_000).toISOString() },
        ],
      },
    });
    expect(res.status).toBe(201);
    await policy({
      name: 'payments-oncall',
      match: { namespaces: ['payments'] },
      levels: [{ targets: [{ schedule: 'payments-primary' }] }],
    });
    const oncall = await s.call('GET', '/oncall?schedule=payments-primary', { token: s.tokens.operator });
    expect(oncall.body.items[0]).toMatchObject({ schedule: 'payments-primary', person: 'bob', override: true });

    const name = await open('payments', 'high');
    await receiver.waitFor('/slack/bob', (n) => n.body.text.includes(name));
    expect(receiver.accepted('/slack/alice')).toHaveLength(0);
    const [note] = await s.eventually(
      () => notifications(name),
      (n) => n.length >= 1,
    );
    expect(note.details).toMatchObject({
      channel: 'slack',
      target: receiver.host,
      level: 1,
      attempt: 1,
      person: 'bob',
    });
  });

  it('a maintenance window of the namespace holds the ladder and the timeline says why; removed, the ladder goes on', async () => {
    await policy({
      name: 'maint-policy',
      match: { namespaces: ['maint'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/maint') }] }],
    });
    const now = Date.now();
    const window = await s.call('POST', '/maintenance-windows', {
      token: s.tokens.admin,
      body: {
        name: 'maint-upgrade',
        namespace: 'maint',
        from: new Date(now - 60_000).toISOString(),
        to: new Date(now + 6 * 3600_000).toISOString(),
        reason: 'database upgrade',
      },
    });
    expect(window.status).toBe(201);
    const name = await open('maint', 'critical');
    await untilState(name, 'Escalated');
    const held = await s.eventually(
      () => timeline(name),
      (events) => events.some((e) => e.type === 'Escalation' && e.message.includes('maintenance window maint-upgrade')),
    );
    expect(held.find((e) => e.message.includes('maint-upgrade')).message).toContain('database upgrade');
    await s.eventually(
      () => ladderState(name),
      (l) => l.state === 'held',
    );
    expect(receiver.accepted('/slack/maint')).toHaveLength(0);

    expect((await s.call('DELETE', '/maintenance-windows/maint-upgrade', { token: s.tokens.admin })).status).toBe(204);
    await s.wf.env.sleep(5 * MINUTE); // the ladder re-checks its window every 5m
    await receiver.waitFor('/slack/maint', (n) => n.body.text.includes(name));
    expect((await timeline(name)).some((e) => e.message?.startsWith('Maintenance over'))).toBe(true);
  });
});

describe('approvals', () => {
  it('an approval request is notified to level 1; expired, it closes its page and the incident climbs the ladder', async () => {
    await policy({
      name: 'approve-policy',
      match: { namespaces: ['approve'] },
      levels: [
        {
          targets: [
            { channel: 'slack', url: receiver.url('/slack/approve') },
            { channel: 'pagerduty', routingKey: ROUTING_KEY },
          ],
        },
      ],
    });
    const spec = runbookSpecSchema.parse({
      name: 'approve-http-fix',
      category: 'custom',
      version: '1.0.0',
      description: 'an HTTP fix that needs a yes',
      severity: ['high'],
      approvalRequired: true,
      maxAttempts: 1,
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: receiver.url('/fix'), expectStatus: 200 } }],
    });
    expect((await createRunbook(spec)).created).toBe(true);
    const name = await open('approve', 'high');
    const list = await s.eventually(
      () => get(`/approvals?incident=${name}&status=pending`),
      (r) => r.body.items?.length === 1,
      60_000,
    );
    const approval: string = list.body.items[0].name;
    await approvalAwaitingDecision(s.client, approval);

    const [asked] = await receiver.waitFor('/slack/approve', (n) => n.body.text.includes(approval));
    expect(asked.body.text).toContain(name);
    const [page] = await receiver.waitFor('/pagerduty', pagerDuty(approval, 'trigger'));
    expect(page.body.payload.summary).toContain('operator');

    await s.wf.env.sleep(31 * MINUTE); // the approval expires
    await untilState(name, 'Escalated');
    await receiver.waitFor('/pagerduty', pagerDuty(approval, 'resolve'));
    await receiver.waitFor('/pagerduty', pagerDuty(name, 'trigger'));
    await receiver.waitFor('/slack/approve', (n) => n.body.text.includes(`${name} escalated to on-call (L1)`));
    expect(receiver.accepted('/fix')).toHaveLength(0);
    // Later incidents of the category must escalate at once again.
    expect(await deleteRunbook('approve-http-fix')).toBeDefined();
  });
});

/**
 * A bounded time to a human: runbooks of HTTP steps (each test deletes its own, so later incidents
 * escalate at once again), a local port nobody listens on for a service that refuses connections.
 */
describe('the remediation budget', () => {
  /** A service that refuses connections: nothing listens there. */
  let refused = '';
  beforeAll(async () => {
    refused = `http://127.0.0.1:${await freePort()}`;
  });

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
      const name = await openOn('budget-a', 'critical', 'Deployment/api');
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
      levels: [
        { targets: [{ channel: 'webhook', url: receiver.url('/hooks/budget-late'), secret: BUDGET_WEBHOOK_SECRET }] },
      ],
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
      const name = await openOn('budget-late', 'critical', 'StatefulSet/db');
      await until(stateOf.bind(null, name), (state) => state === 'Remediating');
      await skipUntil(async () => receiver.accepted('/hooks/budget-late').some(escalated), 11 * MINUTE, 'L1');
      const [page] = receiver.accepted('/hooks/budget-late').filter(escalated);
      expect(page.body).toMatchObject({ type: 'incident.escalated', level: 1 });
      expect(page.body.message).toMatch(/ran out while plan RP-\S+ runs \(attempt 1 of 3\); automation continues$/);
      expect(page.body.incident.state).toBe('Remediating');
      expect(receiver.verify(page, BUDGET_WEBHOOK_SECRET)).toBe(true);

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
      const name = await openOn('budget-b', 'high', 'DaemonSet/agent');
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
      const name = await openOn('budget-c', 'medium', 'Node/worker-7');
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
      const name = await openOn('budget-none', 'low', 'Deployment/worker');
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
      const name = await openOn('budget-d', 'low', 'Pod/api-0');
      const pending = await until(
        () => get(`/approvals?incident=${name}&status=pending`),
        (r) => r.body.items?.length === 1,
      );
      const approval: string = pending.body.items[0].name;
      // No workflow time goes by: the announcement goes out as the approval is asked.
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

/**
 * Last in this file on purpose: after activities failed with their own retry delay, the
 * time-skipping test server skips time slowly for minutes (a real server has no such clock), so
 * no test that sleeps may follow.
 */
describe('deliveries', () => {
  it('a receiver answering 500 three times then 200 gets one delivery, retried under one key, while the incident goes on', async () => {
    await policy({
      name: 'flaky-policy',
      match: { namespaces: ['flaky'] },
      levels: [{ targets: [{ channel: 'webhook', url: receiver.url('/hooks/flaky'), secret: WEBHOOK_SECRET }] }],
    });
    // The trigger fails three times; the acknowledge is rate limited once (429 + Retry-After).
    receiver.answerWith((n, attempt) => {
      if (n.path !== '/hooks/flaky') return { status: 200 };
      if (n.body.type === 'incident.escalated' && attempt <= 3) return { status: 500 };
      if (n.body.type === 'incident.acknowledged' && attempt === 1)
        return { status: 429, headers: { 'retry-after': '1' } };
      return { status: 200 };
    });
    try {
      const name = await open('flaky', 'high');
      await s.eventually(
        async () => receiver.requests.filter((r) => r.path === '/hooks/flaky').length,
        (n) => n >= 1,
        60_000,
      );
      // Meanwhile the incident answers at once.
      const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
        token: s.tokens.operator,
        body: { acknowledgedBy: 'carol' },
      });
      expect(ack.status).toBe(200);
      expect(ack.body.status.state).toBe('Escalated');

      const [delivered] = await receiver.waitFor('/hooks/flaky', ofType('incident.escalated'));
      expect(receiver.verify(delivered, WEBHOOK_SECRET)).toBe(true);
      const tries = receiver.requests.filter((r) => r.path === '/hooks/flaky' && r.body.type === 'incident.escalated');
      expect(tries.map((t) => t.status)).toEqual([500, 500, 500, 200]);
      expect(new Set(tries.map((t) => t.headers['webhook-id'])).size).toBe(1);
      expect(new Set(tries.map((t) => t.headers['idempotency-key'])).size).toBe(1);

      // The acknowledge follows the trigger to this stateful receiver, once, after its 429.
      await receiver.waitFor('/hooks/flaky', ofType('incident.acknowledged'));
      const acks = receiver.requests.filter(
        (r) => r.path === '/hooks/flaky' && r.body.type === 'incident.acknowledged',
      );
      expect(acks.map((t) => t.status)).toEqual([429, 200]);
      expect((await resolve(name, 'flaky')).status).toBe(200);
      await receiver.waitFor('/hooks/flaky', ofType('incident.resolved'));
      await ladder(name).result();
      expect(receiver.accepted('/hooks/flaky').filter(ofType('incident.escalated'))).toHaveLength(1);
      const [record] = (await deliveriesOf(name)).filter((d) => d.event === 'incident.escalated');
      expect(record).toMatchObject({ status: 'delivered', tries: 4, channel: 'webhook', target: receiver.host });
    } finally {
      receiver.answerWith(() => ({ status: 200 }));
    }
  });

  it('a receiver that refuses for good (404: a revoked Slack webhook) is not retried; the timeline says so', async () => {
    await policy({
      name: 'gone-policy',
      match: { namespaces: ['gone'] },
      levels: [{ targets: [{ channel: 'slack', url: receiver.url('/slack/revoked') }] }],
    });
    receiver.answerWith((n) => (n.path === '/slack/revoked' ? { status: 404 } : { status: 200 }));
    try {
      const name = await open('gone', 'high');
      const [failed] = await s.eventually(
        async () => (await notifications(name)).filter((e) => e.details.failed),
        (f) => f.length === 1,
      );
      expect(failed.message).toContain('HTTP 404 from');
      expect(failed.details).toMatchObject({ channel: 'slack', target: receiver.host, level: 1, attempt: 1 });
      expect(receiver.requests.filter((r) => r.path === '/slack/revoked')).toHaveLength(1);
    } finally {
      receiver.answerWith(() => ({ status: 200 }));
    }
  });
});
