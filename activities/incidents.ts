import { Context } from '@temporalio/activity';
import { analyzeWithRules, RULES_PROVIDER, type AnalysisContext, type Insight } from '../domain/analyzer';
import {
  CORRELATION_WINDOW_MS,
  type IncidentState,
  type Severity,
  type SignalType,
  type TimelineEvent,
} from '../domain/incident';
import type { AcknowledgeRequest, CorrelatedSignal, ResolveRequest, SnoozeRequest } from '../domain/incident-requests';
import { redactText } from '../domain/redact';
import { riskScore, severityFromRisk } from '../domain/risk';
import { categoryForSignal } from '../domain/vocabulary';
import { signalCount } from '../domain/incident-record';
import { matchRunbooks } from '../domain/runbook-match';
import { appendAudit } from '../store/audit';
import {
  appendCorrelatedSignals,
  appendTimeline,
  clearDedupEntry,
  getIncident,
  relatedOpenIncidents,
  updateIncident,
  type IncidentRecord,
} from '../store/incidents';
import { dequeueSignals, queuedSignals, type InboxSignal } from '../store/signal-inbox';
import { getInsightByIncident, storeInsightOnce, type InsightRecord } from '../store/insights';
import { allocateName } from '../store/names';
import { runbooksInCategory, type RunbookRecord } from '../store/runbooks';
import { idempotencyKey } from './context';
import { analyzeWithLlm, llmContext, type LlmConfig } from './llm';
import { evidenceFor } from './evidence';
import type { IncidentEvidence } from '../domain/evidence';
import { isRunbookStep } from '../contracts/remediation';

export interface IncidentActivityDeps {
  llm?: LlmConfig;
  /** Annotation key prefix, e.g. `foghorn.dev` (FOGHORN_ANNOTATION_PREFIX). */
  annotationPrefix: string;
}

/** The LLM's share of an analysis attempt (start-to-close 2 min in the incident workflow). */
const LLM_BUDGET_MS = 75_000;

/** The built-in rules' insight, with only the suggested actions that parse as runbook steps (a bad suggestion is worse than none). */
function rulesInsight(ctx: AnalysisContext): Insight {
  const insight = analyzeWithRules(ctx);
  return { ...insight, suggestedActions: insight.suggestedActions.filter(isRunbookStep) };
}

async function mustGet(name: string): Promise<IncidentRecord> {
  const incident = await getIncident(name);
  if (!incident) throw new Error(`incident ${name} does not exist`); // retried: ingestion writes it first
  return incident;
}

const event = (e: TimelineEvent, suffix = '') => ({ key: idempotencyKey(suffix), event: e });

/** An operator action's audit record, keyed by the activity (`suffix` keys it apart from another of the same activity's). */
const audit = (
  incident: IncidentRecord,
  action: 'incident.acknowledge' | 'incident.snooze' | 'incident.resolve',
  actor: AcknowledgeRequest['actor'],
  details: Record<string, unknown>,
  at: Date,
  suffix = '',
) =>
  appendAudit(
    { action, ...actor, resource: incident.name, resourceType: 'Incident', namespace: incident.namespace, details },
    at,
    idempotencyKey(suffix ? `${suffix}/audit` : 'audit'),
  );

/** Wraps the wait for a model's answer: what the caller does meanwhile (see analyze). */
export type WhileModelThinks = <T>(answer: Promise<T>) => Promise<T>;

/**
 * Whether a signal came after the incident's resolution by the record: a caller that cannot know
 * (a triage still draining when a person resolved the incident) still labels it right.
 */
const arrivedAfter = (resolvedAt: Date | undefined, at: Date | string) =>
  resolvedAt !== undefined && new Date(at).getTime() >= new Date(resolvedAt).getTime();

/**
 * How many of `signals` (oldest first) the record counts already. The inbox's (`byKey`) are
 * known by their queue id: the record keeps the newest one counted, so a batch that holds it
 * (a retry before its predecessor removed them) counts on after it, and one that does not counts
 * all of its own, even when the caller's index is behind: a drain that counted and removed a
 * batch but whose caller never heard (its worker lost with the activity's completion or its last
 * heartbeat) would otherwise have its successors taken for its own. Signals told one by one, and
 * records from before the key, go by the caller's index.
 */
function alreadyCounted(
  incident: IncidentRecord,
  signals: readonly { key: string }[],
  firstIndex: number,
  byKey: boolean,
): number {
  if (byKey && incident.lastSignalKey !== undefined)
    return signals.findIndex((s) => s.key === incident.lastSignalKey) + 1;
  return Math.max(0, signalCount(incident) - firstIndex);
}

/**
 * Joins signals to the incident: the count, the newest few inline and the risk (only those the
 * record does not count yet, see alreadyCounted, so a retry adds nothing twice), and one
 * SignalCorrelated event each, keyed `<name>/signal/<key>`. `byKey`: inbox signals, keyed by
 * their queue id.
 */
async function recordSignals(
  name: string,
  signals: { key: string; signal: InboxSignal }[],
  firstIndex: number,
  afterResolution: boolean,
  byKey = false,
): Promise<void> {
  const incident = await mustGet(name);
  const known = signalCount(incident);
  const counted = alreadyCounted(incident, signals, firstIndex, byKey);
  const fresh = signals.slice(counted);
  /** The index of signals[0], by the record's count. */
  const base = known - counted;
  if (fresh.length > 0) {
    const score = riskScore(
      incident.signalType,
      incident.severitySource === 'source' ? incident.severity : undefined,
      known + fresh.length,
    );
    await appendCorrelatedSignals(
      incident.name,
      known,
      fresh.map((s) => s.signal),
      {
        riskScore: score,
        lastUpdated: new Date(),
        ...(byKey && { lastSignalKey: fresh.at(-1)!.key }),
        ...(incident.severitySource === 'risk' &&
          incident.state !== 'Resolved' && { severity: severityFromRisk(score) }),
      },
    );
  }
  await appendTimeline(
    incident.name,
    signals.map(({ key, signal: s }, i) => ({
      key: `${incident.name}/signal/${key}`,
      event: {
        timestamp: new Date(s.at),
        type: 'SignalCorrelated',
        source: s.source === 'alertmanager' ? 'alertmanager' : 'detector',
        message: `${s.signalType} joined this incident${s.description ? `: ${s.description}` : ''}${afterResolution || arrivedAfter(incident.resolvedAt, s.at) ? ' (arrived after resolution)' : ''}`,
        ...(s.severity && { severity: s.severity as Severity }),
        details: { signalType: s.signalType, index: base + i + 1 },
      },
    })),
  );
}

/** One clause on what the evidence points at, for the runbook choice. */
const evidenceNote = (e: IncidentEvidence) =>
  e.suspect
    ? `the evidence points at ${e.suspect.summary} (${e.suspect.evidence}, ${Math.round(e.suspect.confidence * 100)}%)`
    : 'the evidence names no change behind the failure';

/** What an analysis leaves: the activity's result, the stored insight, the incident after it. */
interface Analysed {
  result: { insight: string; provider: string; model: string };
  insight: InsightRecord;
  incident: IncidentRecord;
}

type RunbookChoice = { runbook: string; tier: number; matchScore: number };

/** The runbooks an incident's analysis and match choose from. */
export const categoryRunbooks = (incident: Pick<IncidentRecord, 'signalType'>) =>
  runbooksInCategory(categoryForSignal(incident.signalType));

/**
 * The incident workflow's steps on records already read: the activities below read, then call
 * them; a stage (activities/incident-stages.ts) runs several on one read, each handing the next
 * the incident as its write left it (a remediated incident's triage read it three times).
 */
export function createIncidentSteps(deps: IncidentActivityDeps) {
  /**
   * Writes the incident's one insight (the triage's analysis) from a record and its category's
   * runbooks already read; `signal` aborts when the attempt is cancelled (shutdown, timeout).
   * `whileModelThinks` wraps the wait for the model's answer (the triage records joining signals
   * meanwhile). Returns the stored insight and the incident as its analysis left it.
   */
  async function analyze(
    incident: IncidentRecord,
    runbooks: RunbookRecord[],
    signal: AbortSignal,
    whileModelThinks: WhileModelThinks = (answer) => answer,
  ): Promise<Analysed> {
    // A retry after the insight was stored (a crash or an outage in between) finishes the writes
    // that follow it: the insight is the commit point, everything after it is idempotent. Only
    // a retry can find one stored: a first attempt does not look (a store command fewer for every
    // incident), and one that races a stored insight (a reset run) keeps it (storeInsightOnce).
    const existing = Context.current().info.attempt > 1 ? await getInsightByIncident(incident.name) : undefined;
    if (existing) return recordAnalysis(incident, existing);

    // Evidence first (bounded, never failing): the conclusion rests on it.
    const found = await evidenceFor({
      cluster: incident.cluster,
      namespace: incident.namespace,
      resource: incident.resource,
      signalType: incident.signalType,
      firstSignalAt: incident.detectedAt,
    });
    const ctx = await analysisContext(incident, runbooks, found);
    const provider = deps.llm ? { provider: 'openai-compatible', model: deps.llm.model } : RULES_PROVIDER;
    const startedAt = new Date();
    await appendTimeline(incident.name, [
      event(
        {
          timestamp: startedAt,
          type: 'Analysis',
          source: 'ai-engine',
          message: `Analysis started with ${provider.provider}/${provider.model}`,
          details: {
            model: provider.model,
            provider: provider.provider,
            contextSize: llmContext(ctx).length,
            evidenceItems: ctx.evidence?.items.length ?? 0,
            ...(ctx.evidence?.suspect && { suspectedChange: ctx.evidence.suspect.change }),
          },
        },
        'started',
      ),
    ]);

    let insight: Insight;
    let used: { provider: string; model: string } = provider;
    let fallbackReason = '';
    if (deps.llm) {
      const llm = deps.llm;
      // The model's own budget, well inside the attempt's 2 min: a model that never answers
      // ends in the fallback, not in attempt timeouts retried for ever.
      const budget = AbortSignal.timeout(LLM_BUDGET_MS);
      try {
        insight = await whileModelThinks(analyzeWithLlm(llm, ctx, AbortSignal.any([signal, budget])));
      } catch (err) {
        // Cancelled (worker shutting down, attempt timed out): let Temporal retry, don't fall back.
        if (signal.aborted) throw err;
        fallbackReason = budget.aborted
          ? `no answer within ${LLM_BUDGET_MS / 1000} s`
          : redactText((err as Error).message); // the model's error may echo the key
        insight = rulesInsight(ctx);
        used = RULES_PROVIDER;
      }
    } else {
      insight = rulesInsight(ctx);
    }

    const now = new Date();
    const name = await allocateName('AI', now);
    const stored = await storeInsightOnce({
      name,
      namespace: incident.namespace,
      issueRef: incident.name,
      ...used,
      analysis: insight.analysis,
      rootCause: insight.rootCause,
      confidence: insight.confidence,
      recommendations: insight.recommendations,
      suggestedActions: insight.suggestedActions,
      logAnalysis: insight.logAnalysis,
      gitOpsContext: insight.gitOpsContext,
      cascadeAnalysis: insight.cascadeAnalysis,
      blastRadiusPrediction: insight.blastRadiusPrediction,
      relatedEvents: insight.relatedEvents,
      ...(ctx.evidence && { evidence: ctx.evidence }),
      recommendation: insight.recommendation,
      fallbackReason,
      generatedAt: now,
      creationTimestamp: now,
    });
    return recordAnalysis(incident, stored);
  }

  /** The incident's analysis result and the closing Analysis event, both from the stored insight. */
  async function recordAnalysis(incident: IncidentRecord, stored: InsightRecord): Promise<Analysed> {
    const fallbackReason = stored.fallbackReason ?? '';
    const updated = await updateIncident(incident.name, {
      insight: stored.name,
      analyzedAt: stored.generatedAt,
      analysisResult: {
        rootCause: stored.rootCause ?? '',
        recommendation: stored.recommendation ?? '',
        confidence: stored.confidence,
        relatedEvents: stored.relatedEvents ?? [],
      },
      lastUpdated: stored.generatedAt,
    });
    await appendTimeline(incident.name, [
      event(
        {
          timestamp: stored.generatedAt,
          type: 'Analysis',
          source: 'ai-engine',
          message: fallbackReason
            ? `LLM analysis failed (${fallbackReason}); fell back to the built-in rules analyzer`
            : `Analysis complete: ${stored.rootCause}`,
          details: {
            confidence: stored.confidence,
            recommendation: stored.recommendation ?? '',
            insight: stored.name,
            provider: stored.provider,
            model: stored.model,
            ...(fallbackReason && { fallback: true, fallbackReason }),
          },
        },
        'done',
      ),
    ]);
    return {
      result: { insight: stored.name, provider: stored.provider, model: stored.model },
      insight: stored,
      incident: updated ?? incident, // resolved meanwhile: the record as read
    };
  }

  /**
   * Picks the best runbook by tier (DESIGN §8) among the category's and records it; null when
   * none fits. Returns the incident as the match left it.
   */
  async function match(
    incident: IncidentRecord,
    runbooks: RunbookRecord[],
    evidence?: IncidentEvidence,
  ): Promise<{ best: RunbookChoice | null; incident: IncidentRecord }> {
    const [best] = matchRunbooks(incident, runbooks);
    if (!best) return { best: null, incident };
    const now = new Date();
    const updated = await updateIncident(incident.name, { runbook: best.runbook, lastUpdated: now });
    // Resolved meanwhile: the match is moot, and the timeline ends with the resolve.
    if (!updated) return { best, incident };
    await appendTimeline(incident.name, [
      event({
        timestamp: now,
        type: 'RunbookMatch',
        source: 'remediation-engine',
        // The choice names what the evidence says, so a reader sees what the runbook is up against.
        message: `Runbook ${best.runbook} matches (tier ${best.tier})${evidence ? `; ${evidenceNote(evidence)}` : ''}`,
        details: {
          runbook: best.runbook,
          matchScore: best.matchScore,
          tier: best.tier,
          ...(evidence?.suspect && { suspectedChange: evidence.suspect.change, evidence: evidence.suspect.evidence }),
        },
      }),
    ]);
    return { best, incident: updated };
  }

  /**
   * Moves the incident to `state`; its record after the move, undefined when resolved meanwhile
   * (or gone). `escalationPolicy` is recorded in the same write; `eventKey` keys the event apart
   * from others the same activity writes.
   */
  async function enterState(input: {
    name: string;
    state: IncidentState;
    at: string;
    event?: Omit<TimelineEvent, 'timestamp'>;
    escalationPolicy?: string;
    eventKey?: string;
  }): Promise<IncidentRecord | undefined> {
    const at = new Date(input.at);
    const updated = await updateIncident(input.name, {
      state: input.state,
      lastUpdated: at,
      ...(input.state === 'Escalated' && { escalatedAt: at }),
      ...(input.escalationPolicy !== undefined && { escalationPolicy: input.escalationPolicy }),
    });
    if (updated && input.event)
      await appendTimeline(input.name, [event({ ...input.event, timestamp: at }, input.eventKey)]);
    return updated;
  }

  /**
   * Records the oldest queued signals of the incident (store/signal-inbox.ts), then removes
   * them from the queue. Keyed by their queue id, so a retry records each once. Answers how
   * many it recorded: fewer than `limit` means the queue was empty when read.
   */
  async function drainSignalInbox(input: {
    name: string;
    firstIndex: number;
    afterResolution: boolean;
    limit: number;
  }): Promise<{ recorded: number }> {
    const queued = await queuedSignals(input.name, input.limit);
    if (queued.length === 0) return { recorded: 0 };
    await recordSignals(
      input.name,
      queued.map((q) => ({ key: q.id, signal: q.signal })),
      input.firstIndex,
      input.afterResolution,
      true,
    );
    await dequeueSignals(queued.map((q) => q.id));
    return { recorded: queued.length };
  }

  /**
   * Resolve (DESIGN §6): annotations, resolution, dedup entry cleared, timeline, audit. `key`
   * keys its event and audit record apart from the others of the activity that holds it (the
   * close of an incident that resolved itself); none for the resolve's own.
   */
  async function resolve(input: ResolveInput, key = ''): Promise<void> {
    const at = new Date(input.at);
    const { request } = input;
    const incident = await mustGet(input.name);
    const p = deps.annotationPrefix;
    const manual = !request.atSource && !request.automatic;
    await updateIncident(
      incident.name,
      {
        state: 'Resolved',
        resolvedAt: at,
        resolution: request.resolution,
        resolvedBy: request.actor.user,
        snoozed: false,
        annotations: {
          ...incident.annotations,
          [`${p}/resolved-by`]: request.actor.user,
          [`${p}/resolved-at`]: at.toISOString(),
          [`${p}/manual-resolution`]: String(manual),
        },
        lastUpdated: at,
      },
      { allowResolved: true },
    );
    await clearDedupEntry(incident);
    await appendTimeline(incident.name, [
      event(
        {
          timestamp: at,
          type: 'Resolved',
          source: request.atSource
            ? 'alertmanager'
            : request.automatic
              ? 'remediation-engine'
              : `user:${request.actor.user}`,
          message: `Resolved by ${request.actor.user}: ${request.resolution}`,
          details: { resolution: request.resolution, resolvedBy: request.actor.user, manual },
        },
        key,
      ),
    ]);
    await audit(
      incident,
      'incident.resolve',
      request.actor,
      { resolution: request.resolution, previousState: incident.state, manual },
      at,
      key,
    );
  }

  return { analyze, match, enterState, drainSignalInbox, resolve };
}

/** A resolve to write: who and why, and when the workflow decided it. */
export interface ResolveInput {
  name: string;
  request: ResolveRequest;
  at: string;
}

export type IncidentSteps = ReturnType<typeof createIncidentSteps>;

/** The incident workflow's side effects. Each is idempotent (keyed writes, conditional updates). */
export function createIncidentActivities(deps: IncidentActivityDeps) {
  const steps = createIncidentSteps(deps);

  return {
    async setIncidentState(input: Parameters<IncidentSteps['enterState']>[0]): Promise<boolean> {
      return (await steps.enterState(input)) !== undefined; // false: resolved meanwhile (or gone), nothing moved
    },

    /** Records signals sent to the workflow one by one (to an incident being resolved): keyed by their index. */
    async recordCorrelatedSignals(input: {
      name: string;
      signals: CorrelatedSignal[];
      firstIndex: number;
      afterResolution: boolean;
    }): Promise<void> {
      await recordSignals(
        input.name,
        input.signals.map((s, i) => ({ key: String(input.firstIndex + i), signal: { ...s, at: new Date(s.at) } })),
        input.firstIndex,
        input.afterResolution,
      );
    },

    drainSignalInbox: steps.drainSignalInbox,

    async acknowledgeIncident(input: { name: string; request: AcknowledgeRequest; at: string }): Promise<void> {
      const at = new Date(input.at);
      const { request } = input;
      const incident = await mustGet(input.name);
      await updateIncident(incident.name, {
        acknowledged: true,
        acknowledgedBy: request.acknowledgedBy,
        acknowledgedAt: at,
        acknowledgeMessage: request.message,
        lastUpdated: at,
      });
      await appendTimeline(incident.name, [
        event({
          timestamp: at,
          type: 'Acknowledged',
          source: `user:${request.actor.user}`,
          message: `Acknowledged by ${request.acknowledgedBy}${request.message ? `: ${request.message}` : ''}`,
          details: { acknowledgedBy: request.acknowledgedBy, message: request.message },
        }),
      ]);
      await audit(
        incident,
        'incident.acknowledge',
        request.actor,
        { message: request.message, acknowledgedBy: request.acknowledgedBy },
        at,
      );
    },

    async snoozeIncident(input: { name: string; request: SnoozeRequest; at: string }): Promise<void> {
      const at = new Date(input.at);
      const { request } = input;
      const until = new Date(at.getTime() + request.durationMs);
      const incident = await mustGet(input.name);
      await updateIncident(incident.name, {
        snoozed: true,
        snoozedBy: request.snoozedBy,
        snoozedAt: at,
        snoozeUntil: until,
        snoozeReason: request.reason,
        lastUpdated: at,
      });
      await appendTimeline(incident.name, [
        event({
          timestamp: at,
          type: 'Snoozed',
          source: `user:${request.actor.user}`,
          message: `Notifications snoozed for ${request.duration} by ${request.snoozedBy}${request.reason ? `: ${request.reason}` : ''}`,
          details: {
            duration: request.duration,
            snoozeUntil: until.toISOString(),
            reason: request.reason,
            snoozedBy: request.snoozedBy,
          },
        }),
      ]);
      await audit(
        incident,
        'incident.snooze',
        request.actor,
        {
          duration: request.duration,
          snoozeUntil: until.toISOString(),
          reason: request.reason,
          snoozedBy: request.snoozedBy,
        },
        at,
      );
    },

    /** Resolve (DESIGN §6): annotations, resolution, dedup entry cleared, timeline, audit. */
    async resolveIncident(input: ResolveInput): Promise<void> {
      await steps.resolve(input);
    },

    /**
     * The source cleared an incident it does not close: an Escalated one (a person resolves it)
     * or one whose remediation plan is running (the plan's verification decides). Noted only.
     */
    async noteSourceResolution(input: { name: string; at: string; plan?: string }): Promise<void> {
      await appendTimeline(input.name, [
        event({
          timestamp: new Date(input.at),
          type: input.plan ? 'SignalCorrelated' : 'Escalation',
          source: 'alertmanager',
          message: input.plan
            ? `The alert resolved at source while plan ${input.plan} runs; its verification decides`
            : 'The alert resolved at source; the incident stays Escalated until a person resolves it',
          details: { resolvedAtSource: true, ...(input.plan && { plan: input.plan }) },
        }),
      ]);
    },
  };
}

export type IncidentActivities = ReturnType<typeof createIncidentActivities>;

/** The facts the analyzers see: the incident, its neighbours in time, candidate runbooks. */
async function analysisContext(
  incident: IncidentRecord,
  runbooks: RunbookRecord[],
  found: Awaited<ReturnType<typeof evidenceFor>>,
): Promise<AnalysisContext> {
  const related = await relatedOpenIncidents(incident, CORRELATION_WINDOW_MS);
  return {
    ...(found.evidence ? { evidence: found.evidence } : { evidenceGap: found.reason }),
    incident: {
      name: incident.name,
      namespace: incident.namespace,
      resource: incident.resource,
      signalType: incident.signalType as SignalType,
      severity: incident.severity,
      description: incident.description,
      labels: incident.labels,
      detectedAt: incident.detectedAt,
      riskScore: incident.riskScore,
      correlatedSignals: incident.correlatedSignals.map((s) => ({
        signalType: s.signalType as SignalType,
        description: s.description,
        at: s.at,
      })),
    },
    related: related.map((r) => ({ ...r, signalType: r.signalType as SignalType })),
    runbooks: runbooks.map((r) => ({ name: r.name, category: r.category, description: r.description })),
  };
}
