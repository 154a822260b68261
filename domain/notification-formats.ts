import type { IncidentState } from './incident';
import type { Severity } from './vocabulary';

/**
 * What each notification channel receives (DESIGN §8, issue 11), in the format its receiver
 * already speaks: Slack Block Kit, PagerDuty Events API v2, a generic JSON webhook event and the
 * chat gateway's plain text. Pure: the caller builds the content (links included) and sends it.
 * Nothing here is secret except the PagerDuty routing key, which only its own field carries.
 */

export const NOTIFICATION_EVENTS = [
  'incident.escalated',
  'incident.acknowledged',
  'incident.resolved',
  'approval.requested',
  'approval.closed',
  'remediation.notify',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** What is known about the incident when a notification is built (all strings, ISO timestamps). */
export interface IncidentSummary {
  name: string;
  namespace: string;
  cluster: string;
  /** `<Kind>/<name>`, e.g. `Deployment/checkout`. */
  resource: string;
  severity: Severity;
  state: IncidentState;
  signalType: string;
  riskScore: number;
  description: string;
  detectedAt: string;
  acknowledgedBy?: string;
  resolvedBy?: string;
  resolution?: string;
}

export interface ApprovalSummary {
  name: string;
  requiredRole: string;
  expiresAt?: string;
  risk: number;
  summary: string;
  /** approved, rejected or expired once decided. */
  outcome?: string;
}

export interface NotificationContent {
  event: NotificationEvent;
  incident: IncidentSummary;
  /** 1-based ladder level; 0 for events that are not a rung (acknowledge, resolve, approvals, Notify). */
  level: number;
  /** 1 = the level's first notification, 2.. = repeats (reminders). */
  attempt: number;
  /** ISO time the notification was built. */
  at: string;
  /** Free text: the escalation reason, a Notify step's message. */
  message?: string;
  approval?: ApprovalSummary;
  /** Absolute URLs, built by the caller. */
  links: { incident: string; temporal: string };
}

// ---------------------------------------------------------------------------------------------
// Shared wording
// ---------------------------------------------------------------------------------------------

/** At most `max` UTF-16 units (what JSON receivers count), an ellipsis when cut, no half emoji. */
function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** Ends with a full stop unless it already ends a sentence. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?…]$/.test(t) ? t : `${t}.`;
}

/** `L2`, `L3, reminder 1`; empty for events that are not a rung. */
function rung(c: NotificationContent): string {
  if (c.level <= 0) return '';
  return c.attempt > 1 ? `L${c.level}, reminder ${c.attempt - 1}` : `L${c.level}`;
}

/** `critical OOMKilled on prod/Deployment/checkout (cluster local)` */
function what(i: IncidentSummary): string {
  return `${i.severity} ${i.signalType} on ${i.namespace}/${i.resource} (cluster ${i.cluster})`;
}

/** The approval the event is about; an approval event without one is the caller's bug. */
function approvalOf(c: NotificationContent): ApprovalSummary {
  if (!c.approval) throw new Error(`a ${c.event} notification needs its approval`);
  return c.approval;
}

/** One line saying what happened, shared by Slack's fallback, the chat text and PagerDuty's summary. */
function headline(c: NotificationContent): string {
  const i = c.incident;
  switch (c.event) {
    case 'incident.escalated':
      return `${i.name} escalated to on-call${c.level > 0 ? ` (${rung(c)})` : ''}: ${what(i)}, risk ${i.riskScore}`;
    case 'incident.acknowledged':
      return `${i.name} acknowledged${i.acknowledgedBy ? ` by ${i.acknowledgedBy}` : ''}: ${what(i)}; escalation paused`;
    case 'incident.resolved':
      return `${i.name} resolved${i.resolvedBy ? ` by ${i.resolvedBy}` : ''}: ${what(i)}${i.resolution ? `; ${i.resolution}` : ''}`;
    case 'approval.requested': {
      const a = approvalOf(c);
      const until = a.expiresAt ? `, until ${a.expiresAt}` : '';
      return `Approval ${a.name} needed (role ${a.requiredRole}${until}) for ${i.name}, ${what(i)}: ${a.summary}, risk ${a.risk}`;
    }
    case 'approval.closed': {
      const a = approvalOf(c);
      return `Approval ${a.name} for ${i.name} ${a.outcome ?? 'closed'}: ${a.summary}`;
    }
    case 'remediation.notify':
      return `${i.name} (${what(i)}): ${c.message ?? 'a remediation step asks for attention'}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Slack incoming webhook: Block Kit
// ---------------------------------------------------------------------------------------------

const SEVERITY_EMOJI: Readonly<Record<Severity, string>> = {
  critical: '🔴',
  high: '🟠',
  medium: '🟡',
  low: '🔵',
};

/** Slack's header block allows 150 characters. */
const SLACK_HEADER_MAX = 149;
/** Section text allows 3000, a field 2000. */
const SLACK_SECTION_MAX = 3000;
const SLACK_FIELD_MAX = 2000;

/** Slack's mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function slackHeader(c: NotificationContent): string {
  const i = c.incident;
  const emoji = SEVERITY_EMOJI[i.severity];
  switch (c.event) {
    case 'incident.escalated':
      return `${emoji} ${i.name} escalated${c.level > 0 ? ` (${rung(c)})` : ''}`;
    case 'incident.acknowledged':
      return `👀 ${i.name} acknowledged${i.acknowledgedBy ? ` by ${i.acknowledgedBy}` : ''}`;
    case 'incident.resolved':
      return `✅ ${i.name} resolved${i.resolvedBy ? ` by ${i.resolvedBy}` : ''}`;
    case 'approval.requested':
      return `🔐 Approval ${approvalOf(c).name} needed for ${i.name}`;
    case 'approval.closed': {
      const a = approvalOf(c);
      return `☑️ Approval ${a.name} ${a.outcome ?? 'closed'}`;
    }
    case 'remediation.notify':
      return `📣 ${i.name}: message from remediation`;
  }
}

/** The section under the fields: why, in words (mrkdwn, escaped). */
function slackDetail(c: NotificationContent): string | undefined {
  const i = c.incident;
  const lines: string[] = [];
  if (c.event === 'approval.requested' || c.event === 'approval.closed') {
    const a = approvalOf(c);
    lines.push(`*${escapeSlack(a.summary)}*`);
    if (c.event === 'approval.requested')
      lines.push(
        `Needs the *${escapeSlack(a.requiredRole)}* role to approve or reject${a.expiresAt ? ` before ${escapeSlack(a.expiresAt)}` : ''}.`,
      );
  }
  if (c.event === 'incident.resolved' && i.resolution) lines.push(`*Resolution:* ${escapeSlack(i.resolution)}`);
  if (c.message) lines.push(escapeSlack(c.message));
  if (i.description && i.description !== c.message) lines.push(`>${escapeSlack(i.description).replace(/\n/g, '\n>')}`);
  return lines.length ? clipText(lines.join('\n'), SLACK_SECTION_MAX) : undefined;
}

function slackField(label: string, value: string): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: clipText(`*${label}*\n${escapeSlack(value)}`, SLACK_FIELD_MAX) };
}

/** Slack's date token shows the detection time in each reader's own time zone; the ISO text is the fallback. */
function slackDate(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  if (Number.isNaN(seconds)) return escapeSlack(iso);
  return `<!date^${seconds}^{date_short_pretty} at {time_secs}|${escapeSlack(iso)}>`;
}

export function slackMessage(c: NotificationContent): { text: string; blocks: unknown[] } {
  const i = c.incident;
  const fields = [
    slackField('Severity', i.severity),
    slackField('Resource', i.resource),
    slackField('Namespace / cluster', `${i.namespace} / ${i.cluster}`),
    slackField('State', i.state),
    ...(c.level > 0 ? [slackField('Level', rung(c))] : []),
    slackField('Risk', `${i.riskScore}/100`),
    ...(c.approval && c.event.startsWith('approval.') ? [slackField('Approval risk', `${c.approval.risk}/100`)] : []),
  ];
  const detail = slackDetail(c);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: clipText(slackHeader(c), SLACK_HEADER_MAX), emoji: true } },
    { type: 'section', fields },
    ...(detail ? [{ type: 'section', text: { type: 'mrkdwn', text: detail } }] : []),
    {
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: 'open-incident',
          text: { type: 'plain_text', text: 'Open incident', emoji: true },
          url: c.links.incident,
          ...(c.event === 'incident.escalated' || c.event === 'approval.requested' ? { style: 'primary' } : {}),
        },
        {
          type: 'button',
          action_id: 'open-temporal',
          text: { type: 'plain_text', text: 'Temporal UI', emoji: true },
          url: c.links.temporal,
        },
      ],
    },
    {
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: `Detected ${slackDate(i.detectedAt)} · ${escapeSlack(i.signalType)} · Foghorn` },
      ],
    },
  ];
  const text = `${SEVERITY_EMOJI[i.severity]} ${headline(c)}${c.message && c.event !== 'remediation.notify' ? ` — ${c.message}` : ''}`;
  return { text: escapeSlack(clipText(text, SLACK_SECTION_MAX)), blocks };
}

// ---------------------------------------------------------------------------------------------
// PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/)
// ---------------------------------------------------------------------------------------------

export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

export const PAGERDUTY_SEVERITY: Readonly<Record<Severity, PagerDutySeverity>> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};

export const PAGERDUTY_SUMMARY_MAX = 1024;

export interface PagerDutyTrigger {
  routing_key: string;
  event_action: 'trigger';
  dedup_key: string;
  payload: {
    summary: string;
    severity: PagerDutySeverity;
    source: string;
    component: string;
    group: string;
    class: string;
    timestamp: string;
    custom_details: Record<string, unknown>;
  };
  links: { href: string; text: string }[];
  client: 'Foghorn';
  client_url: string;
}

export interface PagerDutyStateChange {
  routing_key: string;
  event_action: 'acknowledge' | 'resolve';
  dedup_key: string;
}

/**
 * A Change Event (Events API v2, `…/v2/change/enqueue`): informational, on the service's
 * timeline, never an alert — what a runbook's `Notify` step is; a trigger would open an alert
 * nothing resolves when the fix works.
 */
export interface PagerDutyChangeEvent {
  routing_key: string;
  payload: { summary: string; timestamp: string; source: string; custom_details: Record<string, unknown> };
  links: { href: string; text: string }[];
}

export type PagerDutyEvent = PagerDutyTrigger | PagerDutyStateChange | PagerDutyChangeEvent;

/** The Change Events endpoint beside an Events API v2 endpoint (`…/v2/enqueue` → `…/v2/change/enqueue`). */
export function pagerDutyChangeUrl(eventsUrl: string): string {
  return eventsUrl.replace(/\/enqueue\/?$/, '/change/enqueue');
}

/** The idempotency key / dedup key the receiver sees: the approval for approval events, else the incident. */
export function pagerDutyDedupKey(c: NotificationContent): string {
  return c.event === 'approval.requested' || c.event === 'approval.closed' ? approvalOf(c).name : c.incident.name;
}

export function pagerDutyEvent(c: NotificationContent, routingKey: string): PagerDutyEvent {
  const dedup_key = pagerDutyDedupKey(c);
  switch (c.event) {
    case 'incident.acknowledged':
      return { routing_key: routingKey, event_action: 'acknowledge', dedup_key };
    case 'incident.resolved':
    case 'approval.closed':
      return { routing_key: routingKey, event_action: 'resolve', dedup_key };
    case 'remediation.notify':
      return {
        routing_key: routingKey,
        payload: {
          summary: clipText(headline(c), PAGERDUTY_SUMMARY_MAX),
          timestamp: c.at,
          source: `${c.incident.cluster}/${c.incident.namespace}`,
          custom_details: { event: c.event, incident: c.incident.name, ...(c.message && { message: c.message }) },
        },
        links: [{ href: c.links.incident, text: `Foghorn incident ${c.incident.name}` }],
      };
    case 'incident.escalated':
    case 'approval.requested':
      break;
  }
  const i = c.incident;
  const summary = c.event === 'incident.escalated' && c.message ? `${headline(c)} — ${c.message}` : headline(c);
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: clipText(summary, PAGERDUTY_SUMMARY_MAX),
      severity: PAGERDUTY_SEVERITY[i.severity],
      source: `${i.cluster}/${i.namespace}`,
      component: i.resource,
      group: i.namespace,
      class: i.signalType,
      // An incident alert is dated by its detection; an approval alert by its request.
      timestamp: c.event === 'approval.requested' ? c.at : i.detectedAt,
      custom_details: {
        event: c.event,
        ...i,
        ...(c.level > 0 && { level: c.level }),
        attempt: c.attempt,
        ...(c.message && { message: c.message }),
        ...(c.approval && { approval: c.approval }),
      },
    },
    links: [
      { href: c.links.incident, text: `Foghorn incident ${i.name}` },
      { href: c.links.temporal, text: 'Temporal UI workflow' },
    ],
    client: 'Foghorn',
    client_url: c.links.incident,
  };
}

// ---------------------------------------------------------------------------------------------
// Generic webhook (signed by the sending activity with domain/webhook-signature.ts)
// ---------------------------------------------------------------------------------------------

export interface WebhookEvent {
  type: NotificationEvent;
  incident: IncidentSummary & { links: NotificationContent['links'] };
  level: number;
  attempt: number;
  at: string;
  message?: string;
  approval?: ApprovalSummary;
}

export function webhookEvent(c: NotificationContent): WebhookEvent {
  return {
    type: c.event,
    incident: { ...c.incident, links: c.links },
    level: c.level,
    attempt: c.attempt,
    at: c.at,
    ...(c.message && { message: c.message }),
    ...(c.approval && { approval: c.approval }),
  };
}

// ---------------------------------------------------------------------------------------------
// Chat: the gateway's home channel, a few plain lines with the command to answer
// ---------------------------------------------------------------------------------------------

export function chatText(c: NotificationContent): string {
  const i = c.incident;
  // An approval's own notice (its previews, as a diff, and the commands) says it best.
  if (c.event === 'approval.requested' && c.message) return `${c.message}\n${c.links.incident}`;
  const lines = [sentence(headline(c))];
  switch (c.event) {
    case 'incident.escalated':
      if (c.message) lines.push(sentence(c.message));
      lines.push(`Reply /ack ${i.name} to acknowledge.`);
      break;
    case 'approval.requested': {
      const name = approvalOf(c).name;
      lines.push(`Reply /approve ${name} or /reject ${name} [reason].`);
      break;
    }
    case 'incident.acknowledged':
    case 'incident.resolved':
    case 'approval.closed':
    case 'remediation.notify':
      break;
  }
  lines.push(c.links.incident);
  return lines.join('\n');
}
