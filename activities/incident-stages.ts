import type { IncidentEvidence } from '../domain/evidence';
import { Context } from '@temporalio/activity';
import { escalationMove, ladderOf, remediationBudgetMs, type Ladder } from '../domain/escalation-policy';
import type { IncidentRecord } from '../domain/incident-record';
import { INBOX_BATCH, TRIAGE_DRAIN_EVERY_MS } from '../domain/incident-requests';
import { chooseStrategy, giveUpReason, type RemediationOptions } from '../domain/remediation';
import type { PreparedPlan } from '../domain/remediation-plan';
import { withHeartbeat } from './context';
import { categoryRunbooks, type IncidentSteps, type ResolveInput, type WhileModelThinks } from './incidents';
import type { Endpoint, EscalationSteps } from './notifications';
import type { createPostmortemActivities } from './postmortem';
import type { createRemediationSteps } from './remediation';

type PostmortemSteps = Pick<ReturnType<typeof createPostmortemActivities>, 'generatePostmortem'>;

/**
 * An incident's opening and closing stages, one activity each: a round trip through Temporal per
 * step would cost a burst of incidents as much as the step itself (docs/decisions.md, "Workflows,
 * insight and postmortem"). Every step is idempotent, so a retry redoes only what did not finish.
 */
export function createIncidentStageActivities(
  incidents: IncidentSteps,
  remediation: ReturnType<typeof createRemediationSteps>,
  postmortems: PostmortemSteps,
  escalation: EscalationSteps,
) {
  /**
   * The incident was resolved (or is gone) before its triage. A retry may follow an attempt that
   * made the first plan before it died: the workflow never sees that plan, so it is ended here.
   */
  async function resolvedFirst(name: string): Promise<void> {
    if (Context.current().info.attempt > 1) await remediation.abandonFirstPlan(name);
  }

  /** Records what waits in the inbox, a batch at a time until it is found empty; how many. */
  async function drain(name: string, firstIndex: number, afterResolution = true): Promise<number> {
    let total = 0;
    for (let recorded = INBOX_BATCH; recorded === INBOX_BATCH; total += recorded)
      ({ recorded } = await incidents.drainSignalInbox({
        name,
        firstIndex: firstIndex + total,
        afterResolution,
        limit: INBOX_BATCH,
      }));
    return total;
  }

  /**
   * Resolves as `work` does; while it runs, `drainNow` every TRIAGE_DRAIN_EVERY_MS, one at a time,
   * and the one in flight is awaited, so the count it adds is in the answer. The workflow records
   * nothing while its triage runs (no two records of signals start from the same index): these
   * drains are what shows the signals of a slow model's analysis on the timeline as they come.
   * Only while the model thinks: a triage slow for want of CPU (a storm's opening) would only
   * be slowed further. A failed drain ends them; what it left in the inbox is recorded after the
   * triage, as before.
   */
  async function whileDraining<T>(work: Promise<T>, drainNow: () => Promise<void>): Promise<T> {
    let settled = false;
    let inFlight: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const schedule = () => {
      timer = setTimeout(() => {
        inFlight = drainNow().then(
          () => {
            if (!settled) schedule();
          },
          () => undefined,
        );
      }, TRIAGE_DRAIN_EVERY_MS);
    };
    schedule();
    try {
      return await work;
    } finally {
      settled = true;
      clearTimeout(timer);
      await inFlight;
    }
  }

  /**
   * The triage proper: the analysis, the runbook match and the remediation options; with
   * `prepareFirstPlan`, the first attempt's plan too (made as the workflow would ask for it: the
   * same choice of strategy, the move to `Remediating` in its write); with `escalate`, when there
   * is nothing to try, the escalation too (`escalated`: the workflow starts the ladder). Null when
   * the incident was resolved (or is gone) before it escalated. `analyzing` is the incident as its
   * move to `Analyzing` returned it; each step hands the next the record its own write returned.
   */
  async function triage(
    analyzing: IncidentRecord,
    input: TriageInput,
    signal: AbortSignal,
    whileModelThinks?: WhileModelThinks,
  ): Promise<Triage | null> {
    const runbooks = await categoryRunbooks(analyzing);
    const analysed = await incidents.analyze(analyzing, runbooks, signal, whileModelThinks);
    const { incident } = await incidents.match(
      analysed.incident,
      runbooks,
      analysed.insight.evidence as IncidentEvidence | undefined,
    );
    const options = await remediation.options(incident, runbooks, analysed.insight);
    const giveUp = input.escalate ? giveUpReason(options, []) : undefined;
    if (giveUp) {
      const escalated = await escalate(incident, new Date().toISOString(), giveUp);
      return escalated ? { ...options, escalated } : null;
    }
    const strategy = options.maxAttempts >= 1 ? chooseStrategy(options, []) : null;
    if (!input.prepareFirstPlan || !strategy) return options;
    const firstPlan = await remediation.prepare(
      incident,
      { attempt: 1, strategy, remediating: true },
      { insight: analysed.insight, runbooks },
    );
    const budgetMs = remediationBudgetMs(await escalation.policyFor(incident), incident.severity);
    return { ...options, firstPlan, remediationBudgetMs: budgetMs };
  }

  /**
   * Escalates the incident automation gave up on, as the workflow's own steps would: the policy
   * chosen and recorded with the move (to `Failed` under `none`), then L1's endpoints for the
   * ladder. Undefined when the incident was resolved meanwhile.
   */
  async function escalate(incident: IncidentRecord, at: string, message: string): Promise<Escalated | undefined> {
    const policy = await escalation.policyFor(incident);
    const none = policy.levels.length === 0;
    const moved = await incidents.enterState({
      name: incident.name,
      at,
      ...escalationMove(message, none),
      escalationPolicy: policy.name,
      eventKey: 'escalation',
    });
    if (!moved) return undefined;
    if (none) return { message, none, ladder: ladderOf(policy) };
    const level1 = await escalation.firstLevel(moved, policy);
    return { message, none, ladder: ladderOf(policy), ...(level1 && { level1 }) };
  }

  return {
    /**
     * A new incident's opening: `Analyzing`, then the signals waiting in its inbox recorded from
     * `firstIndex` on (those that arrived before its run began: the look every run takes as it
     * starts, without an activity of its own), then the triage, recording those that join while
     * a model analyses it every TRIAGE_DRAIN_EVERY_MS (whileDraining). `drained`: how many it recorded;
     * none when the incident was resolved (or is gone) first, and its close records them. As in
     * closeIncident, a retried attempt goes on counting from what the last one recorded.
     */
    async drainAndTriage(
      input: TriageInput & { firstIndex: number },
    ): Promise<{ drained: number; triage: Triage | null }> {
      const activity = Context.current();
      let drained = (activity.info.heartbeatDetails as { drained?: number } | undefined)?.drained ?? 0;
      const progress = () => ({ drained });
      return withHeartbeat(async (signal) => {
        const analyzing = await incidents.enterState({ name: input.name, state: 'Analyzing', at: input.at });
        if (!analyzing) {
          await resolvedFirst(input.name);
          return { drained, triage: null };
        }
        // A count that grew is sent at once: a retry goes on from it (nothing to send when none did).
        const drainNow = async () => {
          const recorded = await drain(input.name, input.firstIndex + drained, false);
          drained += recorded;
          if (recorded > 0) activity.heartbeat(progress());
        };
        await drainNow();
        // Triaged first: `drained` grows while the model thinks.
        const triaged = await triage(analyzing, input, signal, (answer) => whileDraining(answer, drainNow));
        return { drained, triage: triaged };
      }, progress);
    },

    /**
     * The close of a resolved incident: with `resolve`, the resolve the workflow decided itself
     * first (a verified plan's, or the source's it deferred), then the signals queued up to now, its postmortem, then those
     * queued while it was written (an acknowledged alert is never dropped). Signals recorded from
     * `firstIndex` on; returns how many. How many its drains recorded travels in the heartbeat,
     * so an attempt after a failed one (the postmortem's write, say) goes on counting from there:
     * started again from `firstIndex`, it would take signals queued meanwhile for ones already
     * counted, and the incident's count would come up short.
     */
    async closeIncident(input: {
      name: string;
      firstIndex: number;
      resolve?: ResolveInput;
    }): Promise<{ recorded: number; postmortem: string }> {
      const activity = Context.current();
      let recorded = (activity.info.heartbeatDetails as { recorded?: number } | undefined)?.recorded ?? 0;
      const progress = () => ({ recorded });
      return withHeartbeat(async () => {
        if (input.resolve) await incidents.resolve(input.resolve, 'resolve');
        const before = recorded;
        recorded += await drain(input.name, input.firstIndex + recorded);
        if (recorded > before) activity.heartbeat(progress());
        const postmortem = await postmortems.generatePostmortem({ incident: input.name });
        recorded += await drain(input.name, input.firstIndex + recorded);
        return { recorded, postmortem };
      }, progress);
    },
  };
}

export type IncidentStageActivities = ReturnType<typeof createIncidentStageActivities>;

interface TriageInput {
  name: string;
  at: string;
  /** Make the first attempt's plan (the incident workflow always asks; tests of the analysis alone do not). */
  prepareFirstPlan?: boolean;
  /** Escalate when there is nothing to try (the incident workflow always asks). */
  escalate?: boolean;
}

/**
 * What a triage found: the remediation options, with the first plan or the escalation when asked
 * for; with the first plan, the incident policy's remediation budget for its severity.
 */
export type Triage = RemediationOptions & {
  firstPlan?: PreparedPlan;
  escalated?: Escalated;
  remediationBudgetMs?: number;
};

/** The triage's escalation: the ladder to start (none under the policy `none`), and L1's endpoints when read. */
export interface Escalated {
  /** Automation's message, ending "; escalated to on-call". */
  message: string;
  none: boolean;
  ladder: Ladder;
  /** Absent while a maintenance window holds the namespace: the ladder reads them when it ends. */
  level1?: Endpoint[];
}
