import type { Actor } from '../domain/incident-requests';
import { appendAudit } from '../store/audit';
import {
  approvalByKey,
  createApprovalOnce,
  decideApprovalOnce,
  getApproval,
  type ApprovalRecord,
} from '../store/approvals';
import { appendTimeline } from '../store/incidents';
import { allocateName } from '../store/names';
import { updatePlan } from '../store/remediations';

/** What the chat notice shows of each preview: enough to decide from a phone. */
const NOTICE_DIFF_CHARS = 1200;

/** What a plan asks for; `key` is `<plan>` or `<plan>/<step>` (an agentic action): one approval per key. */
export type RequestApprovalInput = Omit<
  ApprovalRecord,
  'name' | 'status' | 'requestedAt' | 'expiresAt' | 'decidedAt' | 'decidedBy' | 'comment' | 'expiryReason'
> & { ttlMs: number };

async function mustGet(name: string) {
  const approval = await getApproval(name);
  if (!approval) throw new Error(`approval ${name} does not exist`); // retried: it is written first
  return approval;
}

/** The approval workflow's side effects; each is idempotent (keyed records and events). */
export function createApprovalActivities() {
  return {
    /** Allocates the `APR-…` name and writes the pending record, once per key. */
    async requestApproval(input: RequestApprovalInput): Promise<{ name: string; expiresAt: string }> {
      const existing = await approvalByKey(input.key);
      if (existing) return { name: existing.name, expiresAt: existing.expiresAt.toISOString() };
      const now = new Date();
      const { ttlMs, ...fields } = input;
      const name = await allocateName('APR', now);
      // The plan shows that it waits before the approval is listed: nobody sees a pending
      // approval on a plan that still says Executing.
      await updatePlan(input.plan, { state: 'Pending', approval: name });
      const stored = await createApprovalOnce({
        ...fields,
        name,
        status: 'pending',
        requestedAt: now,
        expiresAt: new Date(now.getTime() + ttlMs),
      });
      return { name: stored.name, expiresAt: new Date(stored.expiresAt).toISOString() };
    },

    /** `ApprovalRequired` on the incident's timeline. */
    async announceApproval(input: { name: string }): Promise<void> {
      const a = await mustGet(input.name);
      await appendTimeline(a.incident, [
        {
          key: `${a.name}/required`,
          event: {
            timestamp: a.requestedAt,
            type: 'ApprovalRequired',
            source: 'approval-engine',
            message: `Approval ${a.name} (${a.requiredRole}) required before ${a.action}: ${a.reasons.join('; ')}`,
            details: {
              approvalName: a.name,
              requiredRole: a.requiredRole,
              plan: a.plan,
              riskScore: a.riskScore,
              reasons: a.reasons,
              expiresAt: a.expiresAt.toISOString(),
            },
          },
        },
      ]);
    },

    /** The announcement's text, to level 1 of the incident's policy: what will change, and the commands that decide it. */
    async approvalNotice(input: { name: string }): Promise<string> {
      const a = await mustGet(input.name);
      const previews = a.previews
        .map((p) => {
          const diff = p.diff.length > NOTICE_DIFF_CHARS ? `${p.diff.slice(0, NOTICE_DIFF_CHARS)}\n…` : p.diff;
          return `Step ${p.step} ${p.action} ${p.target}: ${p.summary}${diff ? `\n${diff}` : ''}`;
        })
        .join('\n');
      return [
        `Approval ${a.name} needed (${a.requiredRole}, risk ${a.riskScore}) for ${a.incident}: ${a.action}.`,
        `Why: ${a.reasons.join('; ')}.`,
        previews,
        `Reply /approve ${a.name} or /reject ${a.name} [reason] before ${a.expiresAt.toISOString()}.`,
      ]
        .filter(Boolean)
        .join('\n');
    },

    /** The decision: record, audit `approval.approve|reject` by the token's user, `ApprovalDecided`. */
    async recordApprovalDecision(input: {
      name: string;
      status: 'approved' | 'rejected';
      actor: Actor;
      at: string;
      comment?: string;
    }): Promise<void> {
      const at = new Date(input.at);
      const a = await decideApprovalOnce(input.name, {
        status: input.status,
        decidedAt: at,
        decidedBy: input.actor.user,
        ...(input.comment && { comment: input.comment }),
      });
      if (!a) throw new Error(`approval ${input.name} does not exist`);
      // Only the decision that took effect is audited (an expired one stays expired).
      if (a.status !== input.status || a.decidedBy !== input.actor.user) return;
      const verb = input.status === 'approved' ? 'approve' : 'reject';
      await appendAudit(
        {
          action: `approval.${verb}`,
          ...input.actor,
          resource: a.name,
          resourceType: 'Approval',
          namespace: a.namespace,
          details: { incident: a.incident, plan: a.plan, comment: input.comment ?? '', requiredRole: a.requiredRole },
        },
        at,
        `${a.name}/decision`,
      );
      await appendTimeline(a.incident, [
        {
          key: `${a.name}/decided`,
          event: {
            timestamp: at,
            type: 'ApprovalDecided',
            source: `user:${input.actor.user}`,
            message: `Approval ${a.name} ${input.status} by ${input.actor.user}${input.comment ? `: ${input.comment}` : ''}`,
            details: {
              approvalName: a.name,
              status: input.status,
              decidedBy: input.actor.user,
              comment: input.comment ?? '',
            },
          },
        },
      ]);
    },

    /** No decision in time (or the incident was resolved): `expired`, `ApprovalExpired`. */
    async expireApproval(input: { name: string; at: string; reason: string }): Promise<void> {
      const at = new Date(input.at);
      const a = await decideApprovalOnce(input.name, { status: 'expired', decidedAt: at, expiryReason: input.reason });
      if (!a) throw new Error(`approval ${input.name} does not exist`);
      await appendTimeline(a.incident, [
        {
          key: `${a.name}/expired`,
          event: {
            timestamp: at,
            type: 'ApprovalExpired',
            source: 'approval-engine',
            message: `Approval ${a.name} expired: ${input.reason}`,
            details: { approvalName: a.name, reason: input.reason },
          },
        },
      ]);
    },
  };
}

export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
