import { formatDuration } from './duration';
import { CORRELATION_WINDOW_MS, splitResource, type TimelineEvent } from './incident';
import { signalCount } from './incident-record';
import { categoryForSignal, RUNBOOK_CATEGORIES, SIGNAL_TYPES, type Severity, type SignalType } from './vocabulary';

/**
 * Postmortems (DESIGN §9): one per resolved incident, written by Foghorn (`foghorn-ai`), then
 * reviewed and closed by people. The report is built here from stored facts only: a field
 * with nothing behind it stays empty (`''`, `0`, `[]`) — never invented. The API's schemas of
 * the report and of its requests are in contracts/postmortems.ts.
 */

// ---------------------------------------------------------------------------------------------
// Vocabularies (the spec leaves them open; decided here)
// ---------------------------------------------------------------------------------------------

export const POSTMORTEM_STATES = ['Open', 'InReview', 'Closed'] as const;
export type PostmortemState = (typeof POSTMORTEM_STATES)[number];

/** The AI author of every generated postmortem. */
export const POSTMORTEM_AUTHOR = 'foghorn-ai';

/** rootCause.category: the runbook category of the incident's signal ('' when unknown). */
export const ROOT_CAUSE_CATEGORIES = RUNBOOK_CATEGORIES;
export type RootCauseCategory = (typeof ROOT_CAUSE_CATEGORIES)[number];

export const ACTION_ITEM_PRIORITIES = ['high', 'medium', 'low'] as const;
export type ActionItemPriority = (typeof ACTION_ITEM_PRIORITIES)[number];
export const ACTION_ITEM_STATUSES = ['open', 'in-progress', 'done'] as const;
export type ActionItemStatus = (typeof ACTION_ITEM_STATUSES)[number];

export const METRIC_PHASES = ['before', 'during', 'after'] as const;
export type MetricPhase = (typeof METRIC_PHASES)[number];

/** Action items of critical/high incidents are due 7 days after resolution, others after 14. */
export const ACTION_ITEM_DUE_DAYS = { high: 7, medium: 14 } as const;
/** Trending looks back this many days before detection. */
export const TRENDING_WINDOW_DAYS = 30;
/** How many earlier incidents' postmortems a report names: the most recent (docs/decisions.md). */
export const RELATED_POSTMORTEMS = 10;

// ---------------------------------------------------------------------------------------------
// The report (spec: Postmortem report fields)
// ---------------------------------------------------------------------------------------------

export interface ActionItem {
  priority: ActionItemPriority;
  description: string;
  /** '' until someone takes it. */
  assignee: string;
  status: ActionItemStatus;
  /** `yyyy-mm-dd` */
  dueDate: string;
}

export interface Trending {
  /** Earlier incidents on the same resource or runbook category. */
  occurrenceCount: number;
  windowDays: number;
  /** The most recent {@link RELATED_POSTMORTEMS}, oldest first. */
  relatedPostMortems: string[];
  /** '' when nothing recurred. */
  pattern: string;
}

/** The spec's report; timestamps are RFC 3339 text. */
export interface PostmortemReport {
  title: string;
  severity: Severity;
  /** Go duration from detection to resolution. */
  duration: string;
  detectedAt: string;
  resolvedAt: string;
  summary: string;
  impact: { usersAffected: number; requestsAffected: string; revenueImpact: string; slosBreached: string[] };
  rootCause: { description: string; category: RootCauseCategory | ''; confidence: number };
  timeline: { time: string; event: string }[];
  remediationApplied: { runbook: string; steps: string[]; result: string };
  actionItems: ActionItem[];
  lessonsLearned: string[];
  metricSnapshots: { name: string; value: string; timestamp: string; phase: MetricPhase }[];
  blastRadius: {
    resource: { kind: string; name: string; namespace: string };
    impact: string;
    severity: Severity;
  }[];
  gitCorrelation: {
    commitSHA: string;
    commitMessage: string;
    author: string;
    /** RFC 3339, or '' without a correlated commit. */
    timestamp: string;
    confidence: number;
    filesChanged: string[];
  };
  trending: Trending;
  gitOpsContext: string;
  logAnalysisSummary: string;
  /** Related incidents and this one, in detection order. */
  cascadeChain: string[];
}

// ---------------------------------------------------------------------------------------------
// Feedback (the API's requests are validated by contracts/postmortems.ts)
// ---------------------------------------------------------------------------------------------

/** At least one field is given. */
export interface PostmortemFeedbackRequest {
  overrideRootCause?: string;
  remediationAccuracy?: number;
  comments?: string;
}

export interface PostmortemFeedback extends PostmortemFeedbackRequest {
  providedBy: string;
  providedAt: Date;
}

// ---------------------------------------------------------------------------------------------
// Building the report
// ---------------------------------------------------------------------------------------------

/** The incident facts a report is built from (a resolved IncidentRecord fits). */
export interface PostmortemIncident {
  name: string;
  namespace: string;
  resource: string;
  signalType: string;
  severity: Severity;
  description: string;
  detectedAt: Date;
  resolvedAt: Date;
  resolution?: string;
  resolvedBy?: string;
  acknowledgedAt?: Date;
  acknowledgedBy?: string;
  escalatedAt?: Date;
  /** The newest joined signals (their types); the count says how many joined in all. */
  correlatedSignals?: { signalType: string; at: Date }[];
  correlatedSignalCount?: number;
}

export interface PostmortemInsight {
  rootCause: string;
  analysis: string;
  confidence: number;
  recommendations: string[];
  cascadeAnalysis: string;
  relatedEvents: string[];
  logAnalysis: string;
  gitOpsContext: string;
}

/** Another incident in the namespace detected within CORRELATION_WINDOW_MS of this one. */
export interface RelatedIncident {
  name: string;
  resource: string;
  signalType: string;
  severity: Severity;
  namespace: string;
  detectedAt: Date;
}

export interface PostmortemInput {
  incident: PostmortemIncident;
  timeline: TimelineEvent[];
  insight?: PostmortemInsight;
  trending: Trending;
  related: RelatedIncident[];
  /** The remediation plan that fixed it, when one did: remediationApplied comes from it, never invented. */
  remediation?: AppliedPlan;
}

/** What remediationApplied is made of: the completed plan's strategy, steps as run, and result. */
export interface AppliedPlan {
  name: string;
  runbook: string;
  strategy: string;
  state: string;
  result: string;
  actions: { type: string; params: unknown; result?: string }[];
}

/** `runbook` names the runbook (or the plan's strategy when none), steps as run, result with the plan. */
export function remediationApplied(plan: AppliedPlan | undefined): PostmortemReport['remediationApplied'] {
  if (!plan) return { runbook: '', steps: [], result: '' };
  return {
    runbook: plan.runbook || plan.strategy,
    steps: plan.actions.map((a) => `${a.type} ${JSON.stringify(a.params)}${a.result ? `: ${a.result}` : ''}`),
    result: `${plan.name} ${plan.state}: ${plan.result}`,
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const isSignalType = (s: string): s is SignalType => (SIGNAL_TYPES as readonly string[]).includes(s);

/** The runbook category of a signal type, '' for a type Foghorn does not know. */
export function rootCauseCategory(signalType: string): RootCauseCategory | '' {
  return isSignalType(signalType) ? categoryForSignal(signalType) : '';
}

/** `yyyy-mm-dd` (UTC) `days` after `from`. */
export function dueDate(from: Date, days: number): string {
  return new Date(from.getTime() + days * DAY_MS).toISOString().slice(0, 10);
}

/** What the trending query found before an incident, in the window. */
export interface EarlierIncidents {
  /** Incidents on the same cluster, namespace and resource. */
  onResource: number;
  /** Incidents of the same runbook category on other resources. */
  elsewhere: number;
  /** Postmortems of the most recent of either (at most {@link RELATED_POSTMORTEMS}), oldest first. */
  postmortems: string[];
}

/** The trending block: how often this resource or this kind of problem occurred before. */
export function summarizeTrending(
  incident: Pick<PostmortemIncident, 'resource' | 'signalType'>,
  { onResource, elsewhere, postmortems }: EarlierIncidents,
  windowDays: number = TRENDING_WINDOW_DAYS,
): Trending {
  const category = rootCauseCategory(incident.signalType);
  const parts = [
    ...(onResource > 0 ? [`${plural(onResource, 'earlier incident')} on ${incident.resource}`] : []),
    ...(elsewhere > 0
      ? [`${plural(elsewhere, `earlier ${category || incident.signalType} incident`)} on other resources`]
      : []),
  ];
  return {
    occurrenceCount: onResource + elsewhere,
    windowDays,
    relatedPostMortems: postmortems,
    pattern: parts.length > 0 ? `${parts.join(' and ')} in the ${windowDays} days before detection` : '',
  };
}

/** Related incidents and this one, oldest detection first (ties: the others first); [] alone. */
export function cascadeChain(incident: Pick<PostmortemIncident, 'name' | 'detectedAt'>, related: RelatedIncident[]) {
  if (related.length === 0) return [];
  const others = [...related].sort((a, b) => a.detectedAt.getTime() - b.detectedAt.getTime());
  const at = incident.detectedAt.getTime();
  const before = others.filter((r) => r.detectedAt.getTime() <= at);
  const after = others.filter((r) => r.detectedAt.getTime() > at);
  return [...before.map((r) => r.name), incident.name, ...after.map((r) => r.name)];
}

function summaryOf(input: PostmortemInput, duration: string): string {
  const { incident: i } = input;
  const correlated = i.correlatedSignals ?? [];
  const joined = signalCount(i);
  const sentences = [
    `${i.signalType} was detected on ${i.resource} in namespace ${i.namespace} at ${i.detectedAt.toISOString()} ` +
      `(severity ${i.severity})${i.description ? `: ${i.description.replace(/\.$/, '')}` : ''}.`,
    joined > 0
      ? `${plural(joined, 'further signal')} joined the incident (${[...new Set(correlated.map((s) => s.signalType))].join(', ')}).`
      : '',
    i.acknowledgedAt
      ? `Acknowledged${i.acknowledgedBy ? ` by ${i.acknowledgedBy}` : ''} ${formatDuration(i.acknowledgedAt.getTime() - i.detectedAt.getTime())} after detection.`
      : '',
    i.escalatedAt
      ? `Escalated to on-call ${formatDuration(i.escalatedAt.getTime() - i.detectedAt.getTime())} after detection.`
      : '',
    `Resolved${i.resolvedBy ? ` by ${i.resolvedBy}` : ''} at ${i.resolvedAt.toISOString()}, ${duration} after detection` +
      `${i.resolution ? `: ${i.resolution.replace(/\.$/, '')}` : ''}.`,
  ];
  return sentences.filter((s) => s !== '').join(' ');
}

/** Statements the stored facts back up; nothing is guessed. */
function lessonsOf(input: PostmortemInput, duration: string, actionItems: ActionItem[]): string[] {
  const { incident: i, insight, related, trending } = input;
  const since = (at: Date) => formatDuration(at.getTime() - i.detectedAt.getTime());
  const correlated = i.correlatedSignals ?? [];
  const joined = signalCount(i);
  const lessons: string[] = [
    i.acknowledgedAt
      ? `Time to acknowledge: ${since(i.acknowledgedAt)}${i.acknowledgedBy ? ` (${i.acknowledgedBy})` : ''}.`
      : 'The incident was not acknowledged before it was resolved.',
    `Time to resolve: ${duration}.`,
  ];
  if (i.escalatedAt) lessons.push(`Automation did not resolve it; escalated to on-call after ${since(i.escalatedAt)}.`);
  if (joined > 0) {
    const types = [...new Set(correlated.map((s) => s.signalType))];
    lessons.push(
      `${plural(joined, 'correlated signal')} (${types.join(', ')}) joined the incident: ${i.resource} showed more than one symptom.`,
    );
  }
  if (related.length > 0) {
    lessons.push(
      `${plural(related.length, 'other incident')} in namespace ${i.namespace} ${related.length === 1 ? 'was' : 'were'} detected within ` +
        `${formatDuration(CORRELATION_WINDOW_MS)} (${related.map((r) => r.name).join(', ')}): investigate them together.`,
    );
  }
  if (insight?.cascadeAnalysis) lessons.push(insight.cascadeAnalysis);
  if (trending.occurrenceCount > 0) lessons.push(`Recurring problem: ${trending.pattern}.`);
  if (actionItems.length > 0) {
    lessons.push(
      `The analysis recommends ${plural(actionItems.length, 'follow-up')}, tracked as action items due ${actionItems[0].dueDate}: ` +
        `${actionItems.map((a) => a.description.replace(/\.$/, '')).join('; ')}.`,
    );
  }
  return lessons;
}

/** The spec's postmortem report for a resolved incident. Pure and deterministic. */
export function buildPostmortemReport(input: PostmortemInput): PostmortemReport {
  const { incident: i, insight, related } = input;
  const duration = formatDuration(i.resolvedAt.getTime() - i.detectedAt.getTime());
  const urgent = i.severity === 'critical' || i.severity === 'high';
  const priority = urgent ? 'high' : 'medium';
  const actionItems: ActionItem[] = (insight?.recommendations ?? [])
    .filter((r) => r.trim() !== '')
    .map((description): ActionItem => ({
      priority,
      description,
      assignee: '',
      status: 'open',
      dueDate: dueDate(i.resolvedAt, ACTION_ITEM_DUE_DAYS[priority]),
    }));

  return {
    title: `${i.signalType} on ${i.resource} (${i.name})`,
    severity: i.severity,
    duration,
    detectedAt: i.detectedAt.toISOString(),
    resolvedAt: i.resolvedAt.toISOString(),
    summary: summaryOf(input, duration),
    impact: { usersAffected: 0, requestsAffected: '', revenueImpact: '', slosBreached: [] },
    rootCause: {
      description: insight?.rootCause ?? '',
      category: rootCauseCategory(i.signalType),
      confidence: insight?.confidence ?? 0,
    },
    timeline: [...input.timeline]
      .sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime())
      .map((e) => ({ time: e.timestamp.toISOString(), event: `${e.type}: ${e.message}` })),
    remediationApplied: remediationApplied(input.remediation),
    actionItems,
    lessonsLearned: lessonsOf(input, duration, actionItems),
    metricSnapshots: [],
    blastRadius: [...related]
      .sort((a, b) => a.detectedAt.getTime() - b.detectedAt.getTime())
      .map((r) => {
        const { kind, name } = splitResource(r.resource);
        return {
          resource: { kind, name, namespace: r.namespace },
          impact: `${r.signalType} (${r.name})`,
          severity: r.severity,
        };
      }),
    gitCorrelation: { commitSHA: '', commitMessage: '', author: '', timestamp: '', confidence: 0, filesChanged: [] },
    trending: input.trending,
    gitOpsContext: insight?.gitOpsContext ?? '',
    logAnalysisSummary: insight?.logAnalysis ?? '',
    cascadeChain: cascadeChain(i, related),
  };
}
