/** The API's vocabularies (domain/*.ts), copied so the bundle carries no schema library. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export const INCIDENT_STATES = ['Detected', 'Analyzing', 'Remediating', 'Resolved', 'Escalated', 'Failed'] as const;
export const PLAN_STATES = ['Pending', 'Executing', 'Verifying', 'Completed', 'Failed', 'RolledBack'] as const;
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export const POSTMORTEM_STATES = ['Open', 'InReview', 'Closed'] as const;
export const RUNBOOK_CATEGORIES = ['oomkill', 'crashloop', 'latency', 'scaling', 'disk', 'network', 'custom'] as const;
export const AUDIT_ACTIONS = [
  'incident.create',
  'incident.acknowledge',
  'incident.snooze',
  'incident.resolve',
  'approval.approve',
  'approval.reject',
  'runbook.create',
  'runbook.update',
  'runbook.delete',
  'remediation.execute',
  'postmortem.review',
  'postmortem.close',
  'postmortem.feedback',
  'postmortem.edit',
  'config.update',
  'cluster.register',
  'cluster.delete',
  'token.create',
  'token.revoke',
  'agent.shell',
  'audit.export',
] as const;

export type Role = 'viewer' | 'operator' | 'admin';
const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
/** viewer < operator < admin (DESIGN §5). */
export const atLeast = (role: Role, needed: Role) => RANK[role] >= RANK[needed];
