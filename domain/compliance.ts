import { formatDuration, toNanoseconds } from './duration';
import { INCIDENT_STATES } from './incident';
import { PLAN_STATES } from './remediation';
import { slaTargetsView, type SlaTargets } from './sla';
import { SEVERITIES } from './vocabulary';

/**
 * The compliance report (spec: ComplianceReport; DESIGN §9) from the store's counts and sums.
 * Zero counts are data and are shown; a mean or a rate over nothing is null, never 0.
 */

interface Sum {
  n: number;
  sum: number;
}

/** The shape of store/compliance.ts's figures this module needs (domain imports no store). */
export interface ComplianceInput {
  incidents: {
    total: number;
    bySeverity: Record<string, number>;
    byState: Record<string, number>;
    detection: Sum;
    resolution: Sum;
    attempts: Sum;
  };
  sla: {
    n: number;
    compliant: number;
    responseViolations: number;
    resolutionViolations: number;
    response: Sum;
    resolution: Sum;
  };
  plans: {
    total: number;
    byState: Record<string, number>;
    agentic: number;
    withoutApproval: number;
    byActionType: Record<string, number>;
  };
  approvals: { byStatus: Record<string, number>; decision: Sum };
  audit: { total: number; byAction: Record<string, number>; bySeverity: Record<string, number> };
}

const mean = (s: Sum): number | null => (s.n === 0 ? null : s.sum / s.n);
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
/** Go `time.Duration` as integer nanoseconds (the spec's unit for MTTD and MTTR). */
const nanoseconds = (s: Sum) => (s.n === 0 ? null : toNanoseconds(s.sum / s.n));
const duration = (s: Sum) => (s.n === 0 ? null : formatDuration(Math.round(s.sum / s.n)));
const ratio = (part: number, whole: number, digits: number) => (whole === 0 ? null : round(part / whole, digits));
/** Every key present, zero when nothing was counted (a count of nothing is 0, not unknown). */
const filled = (keys: readonly string[], counts: Record<string, number>) => ({
  ...Object.fromEntries(keys.map((k) => [k, 0])),
  ...counts,
});

const FINISHED_PLAN_STATES = ['Completed', 'Failed', 'RolledBack'];

export function complianceReport(
  f: ComplianceInput,
  o: { start: Date; end: Date; namespace?: string; sla: SlaTargets; generatedAt: Date },
) {
  const completed = f.plans.byState.Completed ?? 0;
  const finished = FINISHED_PLAN_STATES.reduce((n, s) => n + (f.plans.byState[s] ?? 0), 0);
  const approvals = Object.values(f.approvals.byStatus).reduce((n, c) => n + c, 0);
  return {
    apiVersion: 'v1' as const,
    kind: 'ComplianceReport' as const,
    metadata: { generatedAt: o.generatedAt.toISOString(), ...(o.namespace && { namespace: o.namespace }) },
    spec: {
      Period: { Start: o.start.toISOString(), End: o.end.toISOString() },
      IncidentMetrics: {
        TotalIncidents: f.incidents.total,
        BySeverity: filled(SEVERITIES, f.incidents.bySeverity),
        ByState: filled(INCIDENT_STATES, f.incidents.byState),
        MTTD: nanoseconds(f.incidents.detection),
        MTTR: nanoseconds(f.incidents.resolution),
        MeanRemediationAttempts: f.incidents.attempts.n === 0 ? null : round(mean(f.incidents.attempts)!, 2),
      },
      RemediationMetrics: {
        TotalRemediations: f.plans.total,
        SuccessRate: ratio(completed, finished, 4),
        AutoRemediatedCount: completed,
        AgenticCount: f.plans.agentic,
        ByActionType: f.plans.byActionType,
        ByState: filled(PLAN_STATES, f.plans.byState),
      },
      SLAMetrics: {
        CompliancePercentage: f.sla.n === 0 ? null : round((f.sla.compliant / f.sla.n) * 100, 2),
        ResponseSLAViolations: f.sla.responseViolations,
        ResolutionSLAViolations: f.sla.resolutionViolations,
        AverageResponseTime: duration(f.sla.response),
        AverageResolutionTime: duration(f.sla.resolution),
        Targets: slaTargetsView(o.sla),
      },
      ApprovalMetrics: {
        TotalRequests: f.plans.withoutApproval + approvals,
        AutoApproved: f.plans.withoutApproval,
        ManualApproved: f.approvals.byStatus.approved ?? 0,
        Rejected: f.approvals.byStatus.rejected ?? 0,
        Expired: f.approvals.byStatus.expired ?? 0,
        Pending: f.approvals.byStatus.pending ?? 0,
        AverageDecisionTime: duration(f.approvals.decision),
      },
      AuditSummary: {
        TotalEvents: f.audit.total,
        ByAction: f.audit.byAction,
        BySeverity: filled(SEVERITIES, f.audit.bySeverity),
      },
    },
  };
}
