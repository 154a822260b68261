import type { PlanState } from '../domain/remediation';
import type { RunbookAction } from '../domain/runbook';
import { isDuplicateKey } from './connection';
import { RemediationPlanModel } from './models';
import { findPage, type Page } from './pagination';

const NO_ID = { _id: 0 } as const;

export type PlanAction = RunbookAction & {
  resolved?: unknown;
  outcome?: 'ok' | 'failed' | 'undone' | 'skipped';
  result?: string;
  /** The agent step that proposed it (agentic plans). */
  agenticStep?: number;
};

/** A stored remediation plan: the spec's fields plus what the engine keeps to resume it. */
export interface PlanRecord {
  name: string;
  key: string;
  namespace: string;
  issueRef: string;
  cluster: string;
  attempt: number;
  strategy: string;
  strategyKind: 'runbook' | 'generated' | 'agentic' | 'evidence';
  /** domain/remediation.ts strategyKey; '' on plans made before it was kept. */
  strategyKey?: string;
  /** `<cluster>/<namespace>/<resource>/<signalType>`; '' on plans made before it was kept. */
  subject?: string;
  runbook: string;
  state: PlanState;
  result: string;
  agenticMode: boolean;
  agenticStepCount: number;
  actions: PlanAction[];
  riskScore: number;
  approvalRequired: boolean;
  approvalReasons: string[];
  approval: string;
  verifyWindowMs: number;
  startedAt: Date;
  completedAt?: Date;
  creationTimestamp: Date;
}

/** Creates the plan of `key` unless it exists; returns the one that holds (a retry finds the first). */
export async function createPlanOnce(plan: PlanRecord): Promise<PlanRecord> {
  try {
    await RemediationPlanModel.create(plan);
    return plan; // as written: no read back
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const stored = await RemediationPlanModel.findOne({ key: plan.key }, NO_ID).lean<PlanRecord>();
  if (!stored) throw new Error(`remediation plan ${plan.key} was not stored`);
  return stored;
}

export async function planByKey(key: string): Promise<PlanRecord | undefined> {
  return (await RemediationPlanModel.findOne({ key }, NO_ID).lean<PlanRecord>()) ?? undefined;
}

export async function getPlan(name: string): Promise<PlanRecord | undefined> {
  return (await RemediationPlanModel.findOne({ name }, NO_ID).lean<PlanRecord>()) ?? undefined;
}

const FINAL_STATES: PlanState[] = ['Completed', 'Failed', 'RolledBack'];

/** Sets fields of a plan that is not final yet (a final plan never changes again). */
export async function updatePlan(name: string, set: Partial<PlanRecord>): Promise<void> {
  await RemediationPlanModel.updateOne({ name, state: { $nin: FINAL_STATES } }, { $set: set });
}

/** Ends a plan that is not final yet; the plan as ended, undefined when it had ended already. */
export async function endPlan(
  name: string,
  end: Pick<PlanRecord, 'state' | 'result' | 'completedAt'>,
): Promise<PlanRecord | undefined> {
  return (
    (await RemediationPlanModel.findOneAndUpdate(
      { name, state: { $nin: FINAL_STATES } },
      { $set: end },
      { returnDocument: 'after', projection: NO_ID },
    ).lean<PlanRecord>()) ?? undefined
  );
}

/** Records the concrete inputs of step `index` unless some are recorded; returns those that hold. */
export async function resolveStepOnce<T>(name: string, index: number, resolved: T): Promise<T> {
  const path = `actions.${index}.resolved`;
  await RemediationPlanModel.updateOne({ name, [path]: { $exists: false } }, { $set: { [path]: resolved } });
  const plan = await getPlan(name);
  return (plan?.actions[index]?.resolved ?? resolved) as T;
}

/** What a plan's bookkeeping names it by: fields set when it is made and never changed. */
export type PlanIdentity = Pick<PlanRecord, 'name' | 'issueRef' | 'namespace' | 'runbook'>;

/**
 * Writes what step `index` did, and the plan's move to `state` with it (the move after its last
 * step); the plan's identity, undefined when there is no such plan.
 */
export async function recordStepOutcome(
  name: string,
  index: number,
  outcome: NonNullable<PlanAction['outcome']>,
  result: string,
  state?: PlanState,
): Promise<PlanIdentity | undefined> {
  return (
    (await RemediationPlanModel.findOneAndUpdate(
      { name },
      {
        $set: {
          [`actions.${index}.outcome`]: outcome,
          [`actions.${index}.result`]: result,
          ...(state && { state }),
        },
      },
      { projection: { _id: 0, name: 1, issueRef: 1, namespace: 1, runbook: 1 } },
    ).lean<PlanIdentity>()) ?? undefined
  );
}

/**
 * Appends the action an agent step proposed to the plan (`actions` holds what the agent ran),
 * once per step; returns its index in `actions`.
 */
export async function appendAgenticAction(name: string, step: number, action: PlanAction): Promise<number> {
  await RemediationPlanModel.updateOne(
    { name, 'actions.agenticStep': { $ne: step } },
    { $push: { actions: { ...action, agenticStep: step } } },
  );
  const plan = await getPlan(name);
  const index = plan?.actions.findIndex((a) => a.agenticStep === step) ?? -1;
  if (index < 0) throw new Error(`the action of agent step ${step} of plan ${name} was not stored`);
  return index;
}

export async function setAgenticStepCount(name: string, step: number): Promise<void> {
  await RemediationPlanModel.updateOne({ name, agenticStepCount: { $lt: step } }, { $set: { agenticStepCount: step } });
}

/** The last plan of an incident to complete, for the postmortem's remediationApplied. */
export async function completedPlanOf(incident: string): Promise<PlanRecord | undefined> {
  return (
    (await RemediationPlanModel.findOne({ issueRef: incident, state: 'Completed' }, NO_ID)
      .sort({ attempt: -1 })
      .lean<PlanRecord>()) ?? undefined
  );
}

/** Plans of a runbook that failed (or were rolled back) since `since`: the circuit breaker's count. */
export function recentRunbookFailures(runbook: string, since: Date): Promise<number> {
  return RemediationPlanModel.countDocuments({
    runbook,
    state: { $in: ['Failed', 'RolledBack'] },
    completedAt: { $gte: since },
  });
}

/** Plans that fixed this failure (`subject`) since `since` and held: the ineffective-fix memory reads them. */
export function plansThatHeld(
  subject: string,
  since: Date,
): Promise<Pick<PlanRecord, 'name' | 'issueRef' | 'strategy' | 'strategyKey' | 'completedAt' | 'actions'>[]> {
  return RemediationPlanModel.find(
    { subject, state: 'Completed', completedAt: { $gte: since } },
    { _id: 0, name: 1, issueRef: 1, strategy: 1, strategyKey: 1, completedAt: 1, 'actions.type': 1 },
  )
    .sort({ completedAt: -1 })
    .limit(20)
    .lean<Pick<PlanRecord, 'name' | 'issueRef' | 'strategy' | 'strategyKey' | 'completedAt' | 'actions'>[]>();
}

/** Plans in flight per cluster (Pending, Executing, Verifying): the cluster view's activeRemediations. */
export async function activePlansByCluster(clusters: string[]): Promise<Map<string, number>> {
  const rows = await RemediationPlanModel.aggregate<{ _id: string; n: number }>([
    { $match: { cluster: { $in: clusters }, state: { $in: ['Pending', 'Executing', 'Verifying'] } } },
    { $group: { _id: '$cluster', n: { $sum: 1 } } },
  ]);
  return new Map(rows.map((r) => [r._id, r.n]));
}

export interface PlanFilter {
  namespace?: string;
  state?: PlanState;
  incident?: string;
}

/** One page of plans, newest first (DESIGN §4). */
export function listPlans<K extends keyof PlanRecord = keyof PlanRecord>(
  filter: PlanFilter,
  page: number,
  pageSize: number,
  fields?: readonly K[],
): Promise<Page<Pick<PlanRecord, K>>> {
  const query: Record<string, unknown> = {};
  if (filter.namespace) query.namespace = filter.namespace;
  if (filter.state) query.state = filter.state;
  if (filter.incident) query.issueRef = filter.incident;
  return findPage<Pick<PlanRecord, K>>(
    RemediationPlanModel,
    query,
    { creationTimestamp: -1, name: -1 },
    page,
    pageSize,
    fields,
  );
}

export function plansOfIncident(incident: string): Promise<PlanRecord[]> {
  return RemediationPlanModel.find({ issueRef: incident }, NO_ID).sort({ attempt: 1 }).lean<PlanRecord[]>();
}
