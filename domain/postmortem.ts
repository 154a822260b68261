import type { AvailabilitySample } from './changes';
import { formatDuration } from './duration';
import type { IncidentEvidence, SuspectedChange } from './evidence';
import { CORRELATION_WINDOW_MS, splitResource, type TimelineEvent } from './incident';
import { signalCount } from './incident-record';
import { categoryForSignal, RUNBOOK_CATEGORIES, SIGNAL_TYPES, type Severity, type SignalType } from './vocabulary';

/**
 * Postmortems (DESIGN §9): one per resolved incident, written by Foghorn (`foghorn-ai`), then
 * reviewed, corrected (PATCH) and closed by people. The report is built here from stored facts
 * only: a field with nothing behind it stays empty (`''`, `[]`) or, for a number, `null` — never
 * an invented 0 — and `dataNotes` says why. The API's schemas of the report and of its requests
 * are in contracts/postmortems.ts.
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

/**
 * The spec's impact, plus what Foghorn observed. A number is `null` when no source measured it
 * (never 0 for "unknown"); `dataNotes` says why.
 */
export interface PostmortemImpact {
  /** No source reports users today: null until an operator sets it. */
  usersAffected: number | null;
  requestsAffected: string;
  revenueImpact: string;
  slosBreached: string[];
  /** Distinct failing pods named by the evidence and the incident's signals. */
  podsAffected: number | null;
  /** The most replicas unavailable at once (desired − available), from availability samples. */
  replicasAffected: number | null;
  /** ∫ (desired − available) dt over [detectedAt, resolvedAt] in minutes, one decimal. */
  unavailableReplicaMinutes: number | null;
}

export interface MetricSnapshot {
  name: string;
  value: string;
  timestamp: string;
  phase: MetricPhase;
}

/** The change the evidence suspected (the spec's git fields, from the change record). */
export interface GitCorrelation {
  /** A revision/sha the change's GitOps or release source names; '' when it names none. */
  commitSHA: string;
  commitMessage: string;
  author: string;
  /** RFC 3339, or '' without a correlated change. */
  timestamp: string;
  /** 0 only without a suspected change (then `reason` says why). */
  confidence: number;
  filesChanged: string[];
  /** The change record's id; '' without one. */
  change: string;
  /** Why this confidence, or why there is no suspected change. */
  reason: string;
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
  impact: PostmortemImpact;
  rootCause: { description: string; category: RootCauseCategory | ''; confidence: number };
  timeline: { time: string; event: string }[];
  remediationApplied: { runbook: string; steps: string[]; result: string };
  actionItems: ActionItem[];
  lessonsLearned: string[];
  /** From real sources only (availability samples today); [] otherwise, with a note. */
  metricSnapshots: MetricSnapshot[];
  blastRadius: {
    resource: { kind: string; name: string; namespace: string };
    impact: string;
    severity: Severity;
  }[];
  gitCorrelation: GitCorrelation;
  trending: Trending;
  gitOpsContext: string;
  logAnalysisSummary: string;
  /** Related incidents and this one, in detection order. */
  cascadeChain: string[];
  /**
   * Why a field is empty or null, one note per field, each starting with the field's path and a
   * colon (`impact.usersAffected: …`). An edit that sets the field drops its notes.
   */
  dataNotes: string[];
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
  /** The first signal's labels (`object: Pod/…`, `pod`: the failing member, when it names one). */
  labels?: Record<string, string>;
  /** The newest joined signals (their types and labels); the count says how many joined in all. */
  correlatedSignals?: { signalType: string; at: Date; labels?: Record<string, string> }[];
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
  /** What the analysis collected (stored with the insight); absent when none was collected. */
  evidence?: IncidentEvidence;
  /**
   * The resource's availability samples (Deployments only): the last one before detection (the
   * state at detection), then every one up to when the report is written. [] when none.
   */
  availability: AvailabilitySample[];
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

// ---------------------------------------------------------------------------------------------
// Impact, change correlation and metric snapshots: from observations only
// ---------------------------------------------------------------------------------------------

const MINUTE_MS = 60 * 1000;
const oneDecimal = (n: number) => Math.round(n * 10) / 10;
const time = (d: Date | string) => new Date(d).getTime();

/** `2h0m0s` → `2h`, `1h30m0s` → `1h30m`, `45m0s` → `45m`: a window as people say it. */
export function shortDuration(ms: number): string {
  return formatDuration(ms)
    .replace(/(?<=[hm])0s$/, '')
    .replace(/(?<=h)0m$/, '');
}

const podName = (name: string) => name.replace(/^Pod\//, '');

/** The pods a signal's labels name: `object: Pod/<name>` (the watcher) and `pod: <name>` (alerts). */
function podsNamedBy(labels: Record<string, string> | undefined): string[] {
  if (!labels) return [];
  return [
    ...(typeof labels.object === 'string' && labels.object.startsWith('Pod/') ? [podName(labels.object)] : []),
    ...(typeof labels.pod === 'string' && labels.pod !== '' ? [labels.pod] : []),
  ];
}

/**
 * Distinct failing pods: the evidence's pods (the collector lists only failing ones: not ready or
 * restarted, a few at most), the pods the incident's signals name (the first signal's and the
 * joined ones kept), and the incident's resource when it is a Pod. A lower bound, never a guess:
 * `null` when no source names a pod.
 */
export function podsAffected(
  incident: Pick<PostmortemIncident, 'resource' | 'labels' | 'correlatedSignals'>,
  evidence?: Pick<IncidentEvidence, 'pods'>,
): number | null {
  const failing = new Set([
    ...(evidence?.pods ?? []).map((p) => podName(p.name)),
    ...(incident.resource.startsWith('Pod/') ? [podName(incident.resource)] : []),
    ...podsNamedBy(incident.labels),
    ...(incident.correlatedSignals ?? []).flatMap((s) => podsNamedBy(s.labels)),
  ]);
  return failing.size > 0 ? failing.size : null;
}

const byTime = (samples: AvailabilitySample[]) => [...samples].sort((a, b) => time(a.at) - time(b.at));
const unavailable = (s: AvailabilitySample) => Math.max(0, s.desired - s.available);

/**
 * The samples that say what the availability was over [from, to], oldest first: the last one at
 * or before `from` (the state at `from`), then every one in (from, to].
 */
export function samplesInEffect(samples: AvailabilitySample[], from: Date, to: Date): AvailabilitySample[] {
  const sorted = byTime(samples);
  const atFrom = sorted.filter((s) => time(s.at) <= from.getTime()).at(-1);
  const during = sorted.filter((s) => time(s.at) > from.getTime() && time(s.at) <= to.getTime());
  return [...(atFrom ? [atFrom] : []), ...during];
}

/** The most replicas unavailable at once (desired − available) over [from, to]; null without samples. */
export function replicasAffected(samples: AvailabilitySample[], from: Date, to: Date): number | null {
  const inEffect = samplesInEffect(samples, from, to);
  return inEffect.length > 0 ? Math.max(...inEffect.map(unavailable)) : null;
}

/**
 * ∫ (desired − available) dt over [from, to] in minutes (one decimal): each sample holds until
 * the next. Without a sample at or before `from` the count starts at the first sample (the
 * time before it is unknown, and not counted). null without samples.
 */
export function unavailableReplicaMinutes(samples: AvailabilitySample[], from: Date, to: Date): number | null {
  const inEffect = samplesInEffect(samples, from, to);
  if (inEffect.length === 0) return null;
  let total = 0;
  inEffect.forEach((s, i) => {
    const start = Math.max(time(s.at), from.getTime());
    const end = i + 1 < inEffect.length ? time(inEffect[i + 1].at) : to.getTime();
    total += unavailable(s) * Math.max(0, end - start);
  });
  return oneDecimal(total / MINUTE_MS);
}

/** The metric name of a resource's available replicas in snapshots. */
export const availableReplicasMetric = (resource: string) => `${resource} availableReplicas`;

/**
 * `availableReplicas` of the resource (value `available/desired`): `before` = the state at
 * detection, `during` = the lowest while the incident was open (the first time it was that low),
 * `after` = the last sample at or after resolution. Each only when a sample says it.
 */
export function availabilitySnapshots(
  resource: string,
  samples: AvailabilitySample[],
  from: Date,
  to: Date,
): MetricSnapshot[] {
  const name = availableReplicasMetric(resource);
  const snapshot = (s: AvailabilitySample, phase: MetricPhase, at = time(s.at)): MetricSnapshot => ({
    name,
    value: `${s.available}/${s.desired}`,
    timestamp: new Date(at).toISOString(),
    phase,
  });
  const sorted = byTime(samples);
  const atDetection = sorted.filter((s) => time(s.at) <= from.getTime()).at(-1);
  const lowest = samplesInEffect(sorted, from, to).reduce<AvailabilitySample | undefined>(
    (low, s) => (!low || s.available < low.available ? s : low),
    undefined,
  );
  const after = sorted.filter((s) => time(s.at) >= to.getTime()).at(-1);
  return [
    ...(atDetection ? [snapshot(atDetection, 'before')] : []),
    ...(lowest ? [snapshot(lowest, 'during', Math.max(time(lowest.at), from.getTime()))] : []),
    ...(after ? [snapshot(after, 'after')] : []),
  ];
}

/** A revision or sha the source names (`argocd revision 1a2b3c4`, `flux main@sha1:…`); '' when none. */
export function commitShaOf(source: string): string {
  const named = /(?:\brevision[\s:=]+|\bcommit[\s:=]+|\bsha1?[:=]|@)([0-9a-f]{7,40})\b/i.exec(source);
  const bare = named ?? /\b([0-9a-f]{40})\b/i.exec(source);
  return bare ? bare[1].toLowerCase() : '';
}

/** Why there is no suspected change, when the analysis ran without evidence or there was none. */
export const NO_EVIDENCE_REASON = {
  noAnalysis: 'No evidence was collected: the incident has no analysis',
  notCollected:
    'No evidence was collected with the analysis (evidence is collected for workloads in registered clusters)',
} as const;

/**
 * The spec's git fields from the evidence's suspected change (the change record, not a git
 * host: `filesChanged` stays []). Without a suspect, confidence 0 and `reason` says why.
 */
export function gitCorrelationOf(evidence: IncidentEvidence | undefined, analysed: boolean): GitCorrelation {
  const none = (reason: string): GitCorrelation => ({
    commitSHA: '',
    commitMessage: '',
    author: '',
    timestamp: '',
    confidence: 0,
    filesChanged: [],
    change: '',
    reason,
  });
  if (!evidence) return none(analysed ? NO_EVIDENCE_REASON.notCollected : NO_EVIDENCE_REASON.noAnalysis);
  const suspect: SuspectedChange | undefined = evidence.suspect;
  if (!suspect) {
    const window = `in the ${shortDuration(evidence.windowMs)} before the first failure`;
    const seen = evidence.changes.length;
    return none(
      seen === 0
        ? `No change reached the cluster ${window}`
        : `${plural(seen, 'change')} reached the cluster ${window}; the evidence points at none of them`,
    );
  }
  return {
    commitSHA: commitShaOf(suspect.by.source),
    commitMessage: suspect.summary,
    author: suspect.by.manager || suspect.by.changeCause,
    timestamp: new Date(suspect.at).toISOString(),
    confidence: suspect.confidence,
    filesChanged: [],
    change: suspect.change,
    reason: suspect.reason,
  };
}

/** The report's impact and snapshots from the evidence and availability samples, with the notes that explain the gaps. */
export function observedImpact(input: Pick<PostmortemInput, 'incident' | 'evidence' | 'availability'>): {
  impact: PostmortemImpact;
  metricSnapshots: MetricSnapshot[];
  dataNotes: string[];
} {
  const { incident: i, evidence, availability } = input;
  const from = i.detectedAt;
  const to = i.resolvedAt;
  const impact: PostmortemImpact = {
    usersAffected: null,
    requestsAffected: '',
    revenueImpact: '',
    slosBreached: [],
    podsAffected: podsAffected(i, evidence),
    replicasAffected: replicasAffected(availability, from, to),
    unavailableReplicaMinutes: unavailableReplicaMinutes(availability, from, to),
  };
  const metricSnapshots = availabilitySnapshots(i.resource, availability, from, to);

  const notes = ['impact.usersAffected: unknown; no source reports affected users (an operator may set it)'];
  const kept = i.correlatedSignals?.length ?? 0;
  const joined = signalCount(i);
  if (impact.podsAffected === null) {
    notes.push("impact.podsAffected: unknown; neither the evidence nor the incident's signals name a pod");
  } else if (joined > kept) {
    notes.push(
      `impact.podsAffected: a lower bound; the incident keeps the newest ${kept} of its ${joined} joined signals`,
    );
  }
  const inEffect = samplesInEffect(availability, from, to);
  if (inEffect.length === 0) {
    const why =
      splitResource(i.resource).kind === 'Deployment'
        ? `no availability samples were recorded for ${i.resource}`
        : `availability is sampled for Deployments only, not for ${i.resource}`;
    notes.push(
      `impact.replicasAffected: unknown; ${why}`,
      `impact.unavailableReplicaMinutes: unknown; ${why}`,
      `metricSnapshots: ${metricSnapshots.length === 0 ? 'none' : 'none during the incident'}; ${why}`,
    );
  } else if (time(inEffect[0].at) > from.getTime()) {
    const first = new Date(inEffect[0].at).toISOString();
    const why = `no availability sample of ${i.resource} precedes detection, the first is from ${first}`;
    notes.push(
      `impact.replicasAffected: from ${first} on; ${why}`,
      `impact.unavailableReplicaMinutes: counted from ${first}; ${why}`,
      `metricSnapshots: no 'before' snapshot; ${why}`,
    );
  }
  return { impact, metricSnapshots, dataNotes: notes };
}

// ---------------------------------------------------------------------------------------------
// Reports written before impact was measured (stored without dataNotes)
// ---------------------------------------------------------------------------------------------

/** A report as stored before observed impact: `usersAffected` a placeholder 0, no observed fields, no notes. */
export type LegacyPostmortemReport = Omit<PostmortemReport, 'impact' | 'gitCorrelation' | 'dataNotes'> & {
  impact: Omit<
    PostmortemImpact,
    'usersAffected' | 'podsAffected' | 'replicasAffected' | 'unavailableReplicaMinutes'
  > & {
    usersAffected: number;
  };
  gitCorrelation: Omit<GitCorrelation, 'change' | 'reason'>;
};

const LEGACY_WHY = 'the report was generated before Foghorn measured impact';

/**
 * The report in today's shape. A legacy report's `usersAffected` 0 and empty git fields were
 * placeholders, never observations: they read as unknown (null, with notes). Current reports
 * come back as they are.
 */
export function currentReport(stored: PostmortemReport | LegacyPostmortemReport): PostmortemReport {
  if ('dataNotes' in stored && Array.isArray(stored.dataNotes)) return stored as PostmortemReport;
  const legacy = stored as LegacyPostmortemReport;
  return {
    ...legacy,
    impact: {
      ...legacy.impact,
      usersAffected: null,
      podsAffected: null,
      replicasAffected: null,
      unavailableReplicaMinutes: null,
    },
    gitCorrelation: { ...legacy.gitCorrelation, change: '', reason: `Not recorded: ${LEGACY_WHY}` },
    dataNotes: [
      'impact.usersAffected: unknown; no source reports affected users (an operator may set it)',
      `impact.podsAffected: unknown; ${LEGACY_WHY}`,
      `impact.replicasAffected: unknown; ${LEGACY_WHY}`,
      `impact.unavailableReplicaMinutes: unknown; ${LEGACY_WHY}`,
      ...(legacy.metricSnapshots.length === 0 ? [`metricSnapshots: none; ${LEGACY_WHY}`] : []),
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Edits (PATCH): operators correct and complete the report
// ---------------------------------------------------------------------------------------------

/** What an edit may set; each field given replaces the report's (lists as a whole). */
export interface PostmortemPatch {
  title?: string;
  summary?: string;
  impact?: Partial<PostmortemImpact>;
  rootCause?: Partial<Pick<PostmortemReport['rootCause'], 'description' | 'category'>>;
  actionItems?: ActionItem[];
  lessonsLearned?: string[];
  gitCorrelation?: Partial<GitCorrelation>;
  metricSnapshots?: MetricSnapshot[];
}

/** One changed field of the report: its dotted path, and its value before and after (null for none). */
export interface ReportFieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

const NESTED_PATCH_FIELDS: readonly string[] = ['impact', 'rootCause', 'gitCorrelation'];

/** The fields a patch sets, as dotted paths of the report, in the patch's order. */
export function patchFields(patch: PostmortemPatch): { field: string; value: unknown }[] {
  const out: { field: string; value: unknown }[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (NESTED_PATCH_FIELDS.includes(key) && value !== null && typeof value === 'object') {
      for (const [sub, v] of Object.entries(value as Record<string, unknown>))
        if (v !== undefined) out.push({ field: `${key}.${sub}`, value: v });
    } else out.push({ field: key, value });
  }
  return out;
}

/** The value at a dotted path of the report; null when absent. */
export function reportValue(report: PostmortemReport, field: string): unknown {
  let at: unknown = report;
  for (const key of field.split('.')) {
    if (at === null || typeof at !== 'object') return null;
    at = (at as Record<string, unknown>)[key];
  }
  return at ?? null;
}

/** JSON with sorted keys: equal content, equal text (Dates as RFC 3339, undefined as null). */
function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A value that gives a field what its note says it lacks. */
const fills = (value: unknown) => value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);

/**
 * What an edit changes: every field whose new value differs from the report's (a field sent
 * with the value it has is no change), then `dataNotes` when a change fills a field a note
 * explains (that note goes). [] when nothing changes.
 */
export function reportChanges(report: PostmortemReport, patch: PostmortemPatch): ReportFieldChange[] {
  const changes = patchFields(patch)
    .map(({ field, value }) => ({ field, from: reportValue(report, field), to: value }))
    .filter((c) => canonical(c.from) !== canonical(c.to));
  const filled = changes.filter((c) => fills(c.to)).map((c) => `${c.field}:`);
  const notes = report.dataNotes ?? [];
  const kept = notes.filter((n) => !filled.some((prefix) => n.startsWith(prefix)));
  if (kept.length !== notes.length) changes.push({ field: 'dataNotes', from: notes, to: kept });
  return changes;
}

/** The spec's postmortem report for a resolved incident. Pure and deterministic. */
export function buildPostmortemReport(input: PostmortemInput): PostmortemReport {
  const { incident: i, insight, related } = input;
  const duration = formatDuration(i.resolvedAt.getTime() - i.detectedAt.getTime());
  const observed = observedImpact(input);
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
    impact: observed.impact,
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
    metricSnapshots: observed.metricSnapshots,
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
    gitCorrelation: gitCorrelationOf(input.evidence, insight !== undefined),
    trending: input.trending,
    gitOpsContext: insight?.gitOpsContext ?? '',
    logAnalysisSummary: insight?.logAnalysis ?? '',
    cascadeChain: cascadeChain(i, related),
    dataNotes: observed.dataNotes,
  };
}
