import {
  chatText,
  escapeSlack,
  NOTIFICATION_EVENTS,
  PAGERDUTY_SUMMARY_MAX,
  pagerDutyDedupKey,
  pagerDutyChangeUrl,
  pagerDutyEvent,
  slackMessage,
  webhookEvent,
  type NotificationContent,
  type NotificationEvent,
} from '../../domain/notification-formats';
import { SEVERITIES, type Severity } from '../../domain/vocabulary';

const ROUTING_KEY = 'R0ut1ngKey0123456789abcdefABCDEF';
const LINKS = {
  incident: 'https://foghorn.example.com/api/v1/incidents/INC-20261123-001',
  temporal: 'https://temporal.example.com/namespaces/default/workflows/INC-20261123-001',
};
const APPROVAL = {
  name: 'APR-20261123-002',
  requiredRole: 'admin',
  expiresAt: '2026-11-23T08:50:00.000Z',
  risk: 88,
  summary: 'RestartDeployment prod/checkout',
};

function content(over: Partial<NotificationContent> = {}): NotificationContent {
  return {
    event: 'incident.escalated',
    incident: {
      name: 'INC-20261123-001',
      namespace: 'prod',
      cluster: 'local',
      resource: 'Deployment/checkout',
      severity: 'critical',
      state: 'Escalated',
      signalType: 'OOMKilled',
      riskScore: 85,
      description: 'checkout is OOMKilled repeatedly',
      detectedAt: '2026-11-23T08:00:00.000Z',
    },
    level: 2,
    attempt: 1,
    at: '2026-11-23T08:05:00.000Z',
    message: 'No automatic remediation strategy is available',
    links: LINKS,
    ...over,
  };
}

const event = (e: NotificationEvent, over: Partial<NotificationContent> = {}) =>
  content({ event: e, level: 0, ...(e.startsWith('approval.') && { approval: APPROVAL }), ...over });

interface Block {
  type: string;
  text?: { type: string; text: string; emoji?: boolean };
  fields?: { type: string; text: string }[];
  elements?: { type: string; text: string | { type: string; text: string }; url?: string; action_id?: string }[];
}
const blocks = (c: NotificationContent) => slackMessage(c).blocks as Block[];
const header = (c: NotificationContent) => blocks(c).find((b) => b.type === 'header')!.text!.text;
const fields = (c: NotificationContent) =>
  blocks(c)
    .find((b) => b.fields)!
    .fields!.map((f) => f.text);

describe('PagerDuty Events API v2', () => {
  it('an escalation is a trigger keyed by the incident, in exactly the documented shape', () => {
    expect(pagerDutyEvent(content(), ROUTING_KEY)).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'INC-20261123-001',
      payload: {
        summary:
          'INC-20261123-001 escalated to on-call (L2): critical OOMKilled on prod/Deployment/checkout (cluster local), risk 85 — No automatic remediation strategy is available',
        severity: 'critical',
        source: 'local/prod',
        component: 'Deployment/checkout',
        group: 'prod',
        class: 'OOMKilled',
        timestamp: '2026-11-23T08:00:00.000Z',
        custom_details: {
          event: 'incident.escalated',
          name: 'INC-20261123-001',
          namespace: 'prod',
          cluster: 'local',
          resource: 'Deployment/checkout',
          severity: 'critical',
          state: 'Escalated',
          signalType: 'OOMKilled',
          riskScore: 85,
          description: 'checkout is OOMKilled repeatedly',
          detectedAt: '2026-11-23T08:00:00.000Z',
          level: 2,
          attempt: 1,
          message: 'No automatic remediation strategy is available',
        },
      },
      links: [
        { href: LINKS.incident, text: 'Foghorn incident INC-20261123-001' },
        { href: LINKS.temporal, text: 'Temporal UI workflow' },
      ],
      client: 'Foghorn',
      client_url: LINKS.incident,
    });
  });

  it('a reminder says which one', () => {
    const trigger = pagerDutyEvent(content({ level: 3, attempt: 3 }), ROUTING_KEY);
    expect(trigger).toMatchObject({ dedup_key: 'INC-20261123-001', event_action: 'trigger' });
    expect('payload' in trigger && trigger.payload.summary).toContain('(L3, reminder 2)');
  });

  it('acknowledge and resolve mirror the incident with the same dedup_key and nothing else', () => {
    const acked = event('incident.acknowledged', { incident: { ...content().incident, acknowledgedBy: 'alice' } });
    expect(pagerDutyEvent(acked, ROUTING_KEY)).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'acknowledge',
      dedup_key: 'INC-20261123-001',
    });
    expect(pagerDutyEvent(event('incident.resolved'), ROUTING_KEY)).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'resolve',
      dedup_key: 'INC-20261123-001',
    });
  });

  it.each<[Severity, string]>([
    ['critical', 'critical'],
    ['high', 'error'],
    ['medium', 'warning'],
    ['low', 'info'],
  ])('severity %s is %s', (severity, expected) => {
    const c = content({ incident: { ...content().incident, severity } });
    expect(pagerDutyEvent(c, ROUTING_KEY)).toMatchObject({ payload: { severity: expected } });
  });

  it('the summary is cut to 1024 characters, never splitting an emoji', () => {
    const long = content({ message: `${'x'.repeat(950)}${'🔥'.repeat(100)}` });
    const trigger = pagerDutyEvent(long, ROUTING_KEY);
    const summary = 'payload' in trigger ? trigger.payload.summary : '';
    expect(summary.length).toBeLessThanOrEqual(PAGERDUTY_SUMMARY_MAX);
    expect(summary.length).toBeGreaterThan(PAGERDUTY_SUMMARY_MAX - 2);
    expect(summary.endsWith('…')).toBe(true);
    expect(summary).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no lone high surrogate
    const short = pagerDutyEvent(content({ message: 'short' }), ROUTING_KEY);
    expect('payload' in short && short.payload.summary.endsWith('short')).toBe(true);
  });

  it('an approval request is its own alert keyed by the approval, saying which role and until when', () => {
    const trigger = pagerDutyEvent(event('approval.requested', { at: '2026-11-23T08:20:00.000Z' }), ROUTING_KEY);
    expect(trigger).toMatchObject({
      event_action: 'trigger',
      dedup_key: 'APR-20261123-002',
      payload: {
        severity: 'critical',
        source: 'local/prod',
        timestamp: '2026-11-23T08:20:00.000Z',
        custom_details: { event: 'approval.requested', approval: APPROVAL, name: 'INC-20261123-001' },
      },
    });
    const summary = 'payload' in trigger ? trigger.payload.summary : '';
    expect(summary).toContain('Approval APR-20261123-002 needed');
    expect(summary).toContain('role admin');
    expect(summary).toContain('until 2026-11-23T08:50:00.000Z');
    expect(summary).toContain('INC-20261123-001');
  });

  it('a closed approval resolves the approval alert, not the incident', () => {
    const closed = event('approval.closed', { approval: { ...APPROVAL, outcome: 'approved' } });
    expect(pagerDutyEvent(closed, ROUTING_KEY)).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'resolve',
      dedup_key: 'APR-20261123-002',
    });
  });

  it('a Notify step is a Change Event (informational, never an alert left open)', () => {
    const notify = event('remediation.notify', { message: 'RP-20261123-003: restarting checkout' });
    const change = pagerDutyEvent(notify, ROUTING_KEY);
    expect(change).not.toHaveProperty('event_action');
    expect(change).not.toHaveProperty('dedup_key');
    expect(change).toMatchObject({
      routing_key: ROUTING_KEY,
      payload: {
        summary: expect.stringContaining('RP-20261123-003: restarting checkout'),
        source: 'local/prod',
        custom_details: { event: 'remediation.notify', incident: 'INC-20261123-001' },
      },
    });
    expect(pagerDutyChangeUrl('https://events.pagerduty.com/v2/enqueue')).toBe(
      'https://events.pagerduty.com/v2/change/enqueue',
    );
  });

  it('dedup keys: the approval for approval events, the incident otherwise', () => {
    expect(NOTIFICATION_EVENTS.map((e) => pagerDutyDedupKey(event(e)))).toEqual([
      'INC-20261123-001',
      'INC-20261123-001',
      'INC-20261123-001',
      'APR-20261123-002',
      'APR-20261123-002',
      'INC-20261123-001',
    ]);
    expect(() => pagerDutyDedupKey(event('approval.closed', { approval: undefined }))).toThrow(/needs its approval/);
  });

  it('the routing key appears only in routing_key', () => {
    for (const e of NOTIFICATION_EVENTS) {
      const { routing_key, ...rest } = pagerDutyEvent(event(e), ROUTING_KEY);
      expect(routing_key).toBe(ROUTING_KEY);
      expect(JSON.stringify(rest)).not.toContain(ROUTING_KEY);
    }
  });
});

describe('Slack Block Kit', () => {
  it('header, fields, detail, two url buttons and a context, in that order', () => {
    const message = slackMessage(content());
    expect(message.blocks.map((b) => (b as Block).type)).toEqual([
      'header',
      'section',
      'section',
      'actions',
      'context',
    ]);
    expect(header(content())).toBe('🔴 INC-20261123-001 escalated (L2)');
    expect(blocks(content())[0]).toMatchObject({ text: { type: 'plain_text', emoji: true } });
    expect(fields(content())).toEqual([
      '*Severity*\ncritical',
      '*Resource*\nDeployment/checkout',
      '*Namespace / cluster*\nprod / local',
      '*State*\nEscalated',
      '*Level*\nL2',
      '*Risk*\n85/100',
    ]);
    const detail = blocks(content())[2].text!;
    expect(detail.type).toBe('mrkdwn');
    expect(detail.text).toContain('No automatic remediation strategy is available');
    expect(detail.text).toContain('checkout is OOMKilled repeatedly');
    expect(blocks(content())[3].elements).toEqual([
      expect.objectContaining({
        type: 'button',
        text: expect.objectContaining({ text: 'Open incident' }),
        url: LINKS.incident,
      }),
      expect.objectContaining({
        type: 'button',
        text: expect.objectContaining({ text: 'Temporal UI' }),
        url: LINKS.temporal,
      }),
    ]);
    const context = blocks(content())[4].elements![0];
    expect(context.type).toBe('mrkdwn');
    expect(context.text).toContain('<!date^1795420800^');
    expect(context.text).toContain('|2026-11-23T08:00:00.000Z>');
  });

  it('the fallback text is one line with everything essential', () => {
    const { text } = slackMessage(content());
    expect(text).not.toContain('\n');
    for (const part of [
      'INC-20261123-001',
      'L2',
      'critical',
      'prod/Deployment/checkout',
      'risk 85',
      'No automatic remediation',
    ])
      expect(text).toContain(part);
  });

  it('a reminder shows on the level field and the header', () => {
    const c = content({ level: 3, attempt: 2 });
    expect(header(c)).toBe('🔴 INC-20261123-001 escalated (L3, reminder 1)');
    expect(fields(c)).toContain('*Level*\nL3, reminder 1');
  });

  it('events that are not rungs show no level', () => {
    for (const e of ['incident.acknowledged', 'incident.resolved', 'approval.requested', 'approval.closed'] as const)
      expect(fields(event(e)).some((f) => f.startsWith('*Level*'))).toBe(false);
  });

  it('each severity has its own marker', () => {
    const markers = SEVERITIES.map(
      (severity) => header(content({ incident: { ...content().incident, severity } })).split(' ')[0],
    );
    expect(new Set(markers).size).toBe(SEVERITIES.length);
  });

  it('each event has its own wording', () => {
    const acked = event('incident.acknowledged', { incident: { ...content().incident, acknowledgedBy: 'alice' } });
    const resolved = event('incident.resolved', {
      incident: { ...content().incident, state: 'Resolved', resolvedBy: 'bob', resolution: 'Raised the memory limit' },
    });
    expect(header(acked)).toBe('👀 INC-20261123-001 acknowledged by alice');
    expect(header(resolved)).toBe('✅ INC-20261123-001 resolved by bob');
    expect(blocks(resolved)[2].text!.text).toContain('*Resolution:* Raised the memory limit');
    expect(header(event('approval.requested'))).toBe('🔐 Approval APR-20261123-002 needed for INC-20261123-001');
    expect(blocks(event('approval.requested'))[2].text!.text).toContain('Needs the *admin* role');
    expect(header(event('approval.closed', { approval: { ...APPROVAL, outcome: 'expired' } }))).toBe(
      '☑️ Approval APR-20261123-002 expired',
    );
    expect(header(event('remediation.notify'))).toContain('INC-20261123-001');
    const headers = NOTIFICATION_EVENTS.map((e) => header(event(e)));
    expect(new Set(headers).size).toBe(NOTIFICATION_EVENTS.length);
  });

  it('escapes &, < and > in every mrkdwn text and the fallback, so no link or mention is injected', () => {
    const hostile = content({
      message: 'see <https://evil.example|here> & <!channel>',
      incident: { ...content().incident, description: 'a > b', resource: 'Deployment/a<b' },
    });
    const { text, blocks: all } = slackMessage(hostile);
    expect(text).toContain('&lt;https://evil.example|here&gt; &amp; &lt;!channel&gt;');
    const mrkdwn = JSON.stringify(all.filter((b) => (b as Block).type === 'section'));
    expect(mrkdwn).not.toMatch(/<!channel>|<https:\/\/evil/);
    expect(mrkdwn).toContain('&lt;!channel&gt;');
    expect(mrkdwn).toContain('a &gt; b');
    expect(mrkdwn).toContain('Deployment/a&lt;b');
    expect(escapeSlack('a & <b> &amp;')).toBe('a &amp; &lt;b&gt; &amp;amp;');
  });

  it('keeps the header under 150 characters', () => {
    const long = event('approval.requested', { approval: { ...APPROVAL, name: `APR-${'9'.repeat(300)}` } });
    expect(header(long).length).toBeLessThan(150);
    expect(header(long).endsWith('…')).toBe(true);
  });

  it('leaves the detail section out when there is nothing to say', () => {
    const bare = content({ message: undefined, incident: { ...content().incident, description: '' } });
    expect(blocks(bare).map((b) => b.type)).toEqual(['header', 'section', 'actions', 'context']);
  });
});

describe('generic webhook event', () => {
  it('carries the event type, the incident with its links, the rung and the time', () => {
    expect(webhookEvent(content({ attempt: 2 }))).toEqual({
      type: 'incident.escalated',
      incident: { ...content().incident, links: LINKS },
      level: 2,
      attempt: 2,
      at: '2026-11-23T08:05:00.000Z',
      message: 'No automatic remediation strategy is available',
    });
  });

  it('carries the approval for approval events and omits what is absent', () => {
    const closed = webhookEvent(
      event('approval.closed', { message: undefined, approval: { ...APPROVAL, outcome: 'rejected' } }),
    );
    expect(closed).toEqual({
      type: 'approval.closed',
      incident: { ...content().incident, links: LINKS },
      level: 0,
      attempt: 1,
      at: '2026-11-23T08:05:00.000Z',
      approval: { ...APPROVAL, outcome: 'rejected' },
    });
    expect(Object.keys(closed)).not.toContain('message');
  });
});

describe('chat text', () => {
  it('an escalation says what, why, and how to acknowledge, in a few lines', () => {
    expect(chatText(content())).toBe(
      [
        'INC-20261123-001 escalated to on-call (L2): critical OOMKilled on prod/Deployment/checkout (cluster local), risk 85.',
        'No automatic remediation strategy is available.',
        'Reply /ack INC-20261123-001 to acknowledge.',
        LINKS.incident,
      ].join('\n'),
    );
  });

  it('an approval request names the /approve and /reject commands', () => {
    const { message: _message, ...bare } = event('approval.requested');
    const text = chatText(bare);
    expect(text).toContain('Approval APR-20261123-002 needed (role admin, until 2026-11-23T08:50:00.000Z)');
    expect(text).toContain('Reply /approve APR-20261123-002 or /reject APR-20261123-002 [reason].');
    expect(text).not.toContain('/ack');
  });

  it("an approval request with the approval's own notice (its previews and commands) sends that notice", () => {
    const notice =
      'Approval APR-20261123-002 needed (admin, risk 90) …\nReply /approve APR-20261123-002 or /reject APR-20261123-002 [reason] before …';
    expect(chatText({ ...event('approval.requested'), message: notice })).toBe(`${notice}\n${LINKS.incident}`);
  });

  it('acknowledge, resolve, a closed approval and a Notify step read differently and ask nothing', () => {
    const texts = [
      chatText(event('incident.acknowledged', { incident: { ...content().incident, acknowledgedBy: 'alice' } })),
      chatText(
        event('incident.resolved', { incident: { ...content().incident, resolvedBy: 'bob', resolution: 'fixed' } }),
      ),
      chatText(event('approval.closed', { approval: { ...APPROVAL, outcome: 'approved' } })),
      chatText(event('remediation.notify', { message: 'RP-20261123-003: restarting checkout' })),
    ];
    expect(texts[0]).toMatch(/^INC-20261123-001 acknowledged by alice: .*escalation paused\./);
    expect(texts[1]).toMatch(/^INC-20261123-001 resolved by bob: .*; fixed\./);
    expect(texts[2]).toMatch(/^Approval APR-20261123-002 for INC-20261123-001 approved: /);
    expect(texts[3]).toContain('RP-20261123-003: restarting checkout');
    for (const t of texts) {
      expect(t).not.toMatch(/Reply \//);
      expect(t.split('\n').length).toBeLessThanOrEqual(3);
    }
  });
});
