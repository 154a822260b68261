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
