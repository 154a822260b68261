import type { PipelineStage } from 'mongoose';
import type { ComplianceInput } from '../domain/compliance';
import type { SlaTarget, SlaTargets } from '../domain/sla';
import { SEVERITIES } from '../domain/vocabulary';
import { elapsedMs } from './analytics';
import { ApprovalModel, AuditRecordModel, IncidentModel, RemediationPlanModel } from './models';

/**
 * The compliance report's raw figures (issue 12 §2), each from one aggregation pipeline over
 * its collection in [start, end) — counts and sums, never the documents. domain/compliance.ts
 * turns them into the report.
 */

export interface ComplianceWindow {
  start: Date;
  end: Date;
  namespace?: string;
}

/** The figures domain/compliance.ts turns into the report. */
export type ComplianceFigures = ComplianceInput;

const windowOf = (w: ComplianceWindow, field: string) => ({
  [field]: { $gte: w.start, $lt: w.end },
  ...(w.namespace && { namespace: w.namespace }),
});

const counts = (rows: Array<{ _id: unknown; n: number }>) =>
  Object.fromEntries(rows.filter((r) => r._id !== null && r._id !== undefined).map((r) => [String(r._id), r.n]));

const sumOf = (row: { n: number; sum: number } | undefined) => ({ n: row?.n ?? 0, sum: row?.sum ?? 0 });

const when = (condition: object) => ({ $cond: [condition, 1, 0] });

/** The severity's target in a pipeline (nested $cond: the wire server has no $switch). */
function targetOf(sla: SlaTargets, field: keyof SlaTarget): unknown {
  return SEVERITIES.reduceRight<unknown>(
    (otherwise, s) => ({ $cond: [{ $eq: ['$severity', s] }, sla[s][field], otherwise] }),
    sla.low[field],
  );
}

/**
 * Response = detection → acknowledgement (or resolution, when nobody acknowledged first);
 * resolution = detection → resolution. Answered after `end` counts as not answered by then.
 * A violation is an answer later than the severity's target, or no answer by `end` when the
 * target had already passed.
 */
function slaStages(w: ComplianceWindow, sla: SlaTargets): PipelineStage.FacetPipelineStage[] {
  const end = w.end.getTime();
  // `$ifNull: [x, null]` turns a missing field into null, which `$eq`/`$ne` can test.
  const orNull = (field: string) => ({ $ifNull: [field, null] });
  const byEnd = (date: object) => ({
    $cond: [{ $and: [{ $ne: [date, null] }, { $lte: [{ $toLong: date }, end] }] }, date, null],
  });
  const took = (field: string) => ({
    $cond: [{ $eq: [field, null] }, null, { $max: [0, { $subtract: [{ $toLong: field }, '$detected'] }] }],
  });
  const violated = (tookField: string, target: string) => ({
    $cond: [
      { $eq: [tookField, null] },
      { $gt: [{ $subtract: [end, '$detected'] }, target] },
      { $gt: [tookField, target] },
    ],
  });
  return [
    {
      $project: {
        _id: 0,
        detected: { $toLong: '$detectedAt' },
        respondTarget: targetOf(sla, 'respondMs'),
        resolveTarget: targetOf(sla, 'resolveMs'),
        respondedAt: byEnd({ $ifNull: ['$acknowledgedAt', orNull('$resolvedAt')] }),
        resolvedAt: byEnd(orNull('$resolvedAt')),
      },
    },
    {
      $project: {
        detected: 1,
        respondTarget: 1,
        resolveTarget: 1,
        respondMs: took('$respondedAt'),
        resolveMs: took('$resolvedAt'),
      },
    },
    {
      $project: {
        respondMs: 1,
        resolveMs: 1,
        respondLate: violated('$respondMs', '$respondTarget'),
        resolveLate: violated('$resolveMs', '$resolveTarget'),
      },
    },
    {
      $group: {
        _id: null,
        n: { $sum: 1 },
        compliant: { $sum: when({ $and: [{ $eq: ['$respondLate', false] }, { $eq: ['$resolveLate', false] }] }) },
        responseViolations: { $sum: when({ $eq: ['$respondLate', true] }) },
        resolutionViolations: { $sum: when({ $eq: ['$resolveLate', true] }) },
        responseN: { $sum: when({ $ne: ['$respondMs', null] }) },
        responseSum: { $sum: { $ifNull: ['$respondMs', 0] } },
        resolutionN: { $sum: when({ $ne: ['$resolveMs', null] }) },
        resolutionSum: { $sum: { $ifNull: ['$resolveMs', 0] } },
      },
    },
  ];
}

export async function complianceFigures(w: ComplianceWindow, sla: SlaTargets): Promise<ComplianceFigures> {
  const incidents = windowOf(w, 'detectedAt');
  const plans = windowOf(w, 'creationTimestamp');
  const approvals = windowOf(w, 'requestedAt');
  const audit = windowOf(w, 'timestamp');
  const group = (by: string) => ({ $group: { _id: by, n: { $sum: 1 } } });
  const sum = (value: object) => ({ $group: { _id: null, n: { $sum: 1 }, sum: { $sum: value } } });

  type Rows = Array<{ _id: string; n: number }>;
  type Sums = Array<{ n: number; sum: number }>;
  // One pass over each collection: the incidents, plans, approvals and audit records of the window.
  const [[incidentFacets], [planFacets], [approvalFacets], [auditFacets]] = await Promise.all([
    IncidentModel.aggregate<{
      bySeverity: Rows;
      byState: Rows;
      detection: Sums;
      resolution: Sums;
      attempts: Sums;
      sla: Array<Record<string, number>>;
    }>([
      { $match: incidents },
      {
        $facet: {
          bySeverity: [group('$severity')],
          byState: [group('$state')],
          detection: [
            { $match: { signalStartedAt: { $gte: new Date(0) } } },
            sum(elapsedMs('$signalStartedAt', '$detectedAt')),
          ],
          resolution: [{ $match: { resolvedAt: { $lte: w.end } } }, sum(elapsedMs('$detectedAt', '$resolvedAt'))],
          attempts: [sum({ $ifNull: ['$remediationAttempts', 0] })],
          sla: slaStages(w, sla),
        },
      },
    ]),
    RemediationPlanModel.aggregate<{
      byState: Rows;
      flags: Array<{ agentic: number; withoutApproval: number }>;
      actionTypes: Rows;
    }>([
      { $match: plans },
      {
        $facet: {
          byState: [group('$state')],
          flags: [
            {
              $group: {
                _id: null,
                agentic: { $sum: when({ $eq: ['$agenticMode', true] }) },
                withoutApproval: { $sum: when({ $eq: ['$approvalRequired', false] }) },
              },
            },
          ],
          actionTypes: [{ $unwind: '$actions' }, group('$actions.type')],
        },
      },
    ]),
    ApprovalModel.aggregate<{ byStatus: Rows; decision: Sums }>([
      { $match: approvals },
      {
        $facet: {
          byStatus: [group('$status')],
          decision: [
            { $match: { status: { $in: ['approved', 'rejected'] }, decidedAt: { $gte: new Date(0) } } },
            sum(elapsedMs('$requestedAt', '$decidedAt')),
          ],
        },
      },
    ]),
    AuditRecordModel.aggregate<{ byAction: Rows; bySeverity: Rows }>([
      { $match: audit },
      {
        $facet: {
          byAction: [group('$action')],
          // Audit records have no severity: the incident's, looked up by its unique name.
          bySeverity: [
            { $match: { resourceType: 'Incident' } },
            { $lookup: { from: 'incidents', localField: 'resource', foreignField: 'name', as: 'incident' } },
            { $unwind: '$incident' },
            group('$incident.severity'),
          ],
        },
      },
    ]),
  ]);
  const { bySeverity, byState, detection, resolution, attempts, sla: slaRows } = incidentFacets!;
  const slaRow = slaRows[0];

  const total = (rows: Array<{ n: number }>) => rows.reduce((t, r) => t + r.n, 0);
  return {
    incidents: {
      total: total(bySeverity),
      bySeverity: counts(bySeverity),
      byState: counts(byState),
      detection: sumOf(detection[0]),
      resolution: sumOf(resolution[0]),
      attempts: sumOf(attempts[0]),
    },
    sla: {
      n: slaRow?.n ?? 0,
      compliant: slaRow?.compliant ?? 0,
      responseViolations: slaRow?.responseViolations ?? 0,
      resolutionViolations: slaRow?.resolutionViolations ?? 0,
      response: { n: slaRow?.responseN ?? 0, sum: slaRow?.responseSum ?? 0 },
      resolution: { n: slaRow?.resolutionN ?? 0, sum: slaRow?.resolutionSum ?? 0 },
    },
    plans: {
      total: total(planFacets!.byState),
      byState: counts(planFacets!.byState),
      agentic: planFacets!.flags[0]?.agentic ?? 0,
      withoutApproval: planFacets!.flags[0]?.withoutApproval ?? 0,
      byActionType: counts(planFacets!.actionTypes),
    },
    approvals: { byStatus: counts(approvalFacets!.byStatus), decision: sumOf(approvalFacets!.decision[0]) },
    audit: {
      total: total(auditFacets!.byAction),
      byAction: counts(auditFacets!.byAction),
      bySeverity: counts(auditFacets!.bySeverity),
    },
  };
}
