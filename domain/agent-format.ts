import { formatDuration } from './duration';
import type { IncidentState, Severity, TimelineEvent } from './incident';
import type { PostmortemReport, PostmortemState } from './postmortem';

/**
 * Tool outputs as chat text (DESIGN §10): plain lines, no markdown tables, since chat systems
 * render markdown differently or not at all, and the model reads the same text.
 */

/** Lines an incident list shows; the rest is counted in "…and N more". */
export const LIST_CAP = 20;
/** Timeline events an incident detail shows, newest last. */
export const DETAIL_EVENTS = 5;

/** Seconds precision: sub-second digits are noise in chat. */
export const chatTime = (d: Date) => new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
const age = (since: Date, now: Date) =>
  formatDuration(Math.max(0, Math.floor((now.getTime() - new Date(since).getTime()) / 1000)) * 1000);
const percent = (x: number) => `${Math.round(x * 100)}%`;

export interface IncidentLine {
  name: string;
  state: IncidentState;
  severity: Severity;
  resource: string;
  namespace: string;
  detectedAt: Date;
}
/** What a list line renders: a list reads only these. */
export const INCIDENT_LINE_FIELDS = [
  'name',
  'state',
  'severity',
  'resource',
  'namespace',
  'detectedAt',
] as const satisfies readonly (keyof IncidentLine)[];

/** One line per incident (at most LIST_CAP); `total` counts every match, shown or not. */
export function formatIncidentList(
  items: IncidentLine[],
  opts: { total: number; now: Date; state?: IncidentState },
): string {
  const what = opts.state ?? 'open';
  if (items.length === 0) return `No ${what} incidents.`;
  const shown = items.slice(0, LIST_CAP);
  const lines = shown.map(
    (i) => `${i.name}  ${i.state}  ${i.severity}  ${i.namespace}/${i.resource}  age ${age(i.detectedAt, opts.now)}`,
  );
  const more = opts.total - shown.length;
  return [
    `${opts.total} ${what} incident${opts.total === 1 ? '' : 's'}:`,
    ...lines,
    ...(more > 0 ? [`…and ${more} more`] : []),
  ].join('\n');
}

export interface IncidentFacts extends IncidentLine {
  signalType: string;
  description: string;
  riskScore: number;
  analysisResult: { rootCause: string; recommendation: string; confidence: number };
  insight: string;
  acknowledged: boolean;
  acknowledgedBy?: string;
  acknowledgedAt?: Date;
  acknowledgeMessage?: string;
  snoozeUntil?: Date;
  snoozedBy?: string;
  snoozeReason?: string;
  resolvedAt?: Date;
  resolvedBy?: string;
  resolution?: string;
  postmortem: string;
}

/** An incident in a dozen lines: what, how bad, who acted, what the analysis says, latest events. */
export function formatIncidentDetail(i: IncidentFacts, timeline: TimelineEvent[], now: Date): string {
  const a = i.analysisResult;
  const lines = [
    `${i.name}: ${i.signalType} on ${i.resource} in ${i.namespace}`,
    `state: ${i.state}  severity: ${i.severity}  risk: ${i.riskScore}`,
    `detected: ${chatTime(i.detectedAt)} (${age(i.detectedAt, now)} ago)`,
    i.description && `description: ${i.description}`,
    i.acknowledged &&
      `acknowledged by ${i.acknowledgedBy} at ${i.acknowledgedAt ? chatTime(i.acknowledgedAt) : '?'}` +
        (i.acknowledgeMessage ? `: ${i.acknowledgeMessage}` : ''),
    i.snoozeUntil &&
      new Date(i.snoozeUntil) > now &&
      `snoozed until ${chatTime(i.snoozeUntil)} by ${i.snoozedBy}` + (i.snoozeReason ? `: ${i.snoozeReason}` : ''),
    i.resolvedAt && `resolved at ${chatTime(i.resolvedAt)} by ${i.resolvedBy}: ${i.resolution ?? ''}`,
    a.rootCause && `root cause: ${a.rootCause} (confidence ${percent(a.confidence)})`,
    a.recommendation && `recommendation: ${a.recommendation}`,
    i.insight && `insight: ${i.insight}`,
    i.postmortem && `postmortem: ${i.postmortem}`,
  ];
  const events = timeline.slice(-DETAIL_EVENTS);
  if (events.length > 0) {
    lines.push(`latest events (${events.length} of ${timeline.length}):`);
    for (const e of events) lines.push(`  ${chatTime(e.timestamp)} ${e.type} (${e.source}): ${e.message}`);
  }
  return lines.filter((l): l is string => typeof l === 'string' && l !== '').join('\n');
}

export interface PostmortemFacts {
  name: string;
  incident: string;
  state: PostmortemState;
  reviewer?: string;
  closedAt?: Date;
  report: PostmortemReport;
}

/** The postmortem's headline facts; the full report stays in the API. */
export function formatPostmortem(pm: PostmortemFacts): string {
  const r = pm.report;
  const lines = [
    `${pm.name} (${pm.state}) for ${pm.incident}: ${r.title}`,
    `severity: ${r.severity}  duration: ${r.duration}  detected: ${r.detectedAt}  resolved: ${r.resolvedAt}`,
    r.summary && `summary: ${r.summary}`,
    r.rootCause.description &&
      `root cause: ${r.rootCause.description}` +
        (r.rootCause.category ? ` [${r.rootCause.category}]` : '') +
        ` (confidence ${percent(r.rootCause.confidence)})`,
    r.remediationApplied.runbook &&
      `remediation: ${r.remediationApplied.runbook}` +
        (r.remediationApplied.result ? ` — ${r.remediationApplied.result}` : ''),
    pm.reviewer && `reviewer: ${pm.reviewer}`,
    pm.closedAt && `closed at ${chatTime(pm.closedAt)}`,
  ];
  if (r.actionItems.length > 0) {
    lines.push('action items:');
    for (const item of r.actionItems)
      lines.push(`  - [${item.priority}] ${item.description} (due ${item.dueDate}, ${item.status})`);
  }
  if (r.lessonsLearned.length > 0) {
    lines.push('lessons learned:');
    for (const lesson of r.lessonsLearned) lines.push(`  - ${lesson}`);
  }
  return lines.filter((l): l is string => typeof l === 'string' && l !== '').join('\n');
}

/** A shell run: the command, its output fenced, and how it ended. */
export function formatShellRun(
  command: string,
  run: { exitCode: number | null; signal: string | null; output: string; timedOut: boolean },
): string {
  const ending = run.timedOut
    ? `timed out and was killed (${run.signal ?? 'SIGKILL'})`
    : run.exitCode !== null
      ? `exit code ${run.exitCode}`
      : `killed by ${run.signal}`;
  const output = run.output.replace(/\n$/, '');
  return [`$ ${command}`, '```', output || '(no output)', '```', ending].join('\n');
}
