import type { UserRole } from '../../domain/roles';
import { createApprovalOnce, type ApprovalRecord } from '../../store/approvals';
import { approvalWorkflow } from '../../workflows/approval';
import { useStack } from '../harness/stack';

/**
 * Approvals over the API: the read side from seeded records, and decisions through REAL approval
 * workflows on the worker (the workflow's validator refuses, its update handler records).
 */
describe('approvals', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  const day = (d: number, h = 12) => new Date(Date.UTC(2026, 10, d, h));
  let serial = 0;

  const approval = (name: string, fields: Partial<ApprovalRecord>): ApprovalRecord => ({
    name,
    key: `RP-for-${name}`,
    namespace: 'shop',
    incident: 'INC-20261101-001',
    plan: `RP-for-${name}`,
    status: 'pending',
    action: 'RestartDeployment Deployment/checkout',
    riskScore: 72,
    requiredRole: 'operator',
    runbook: 'crashloop-restart',
    reasons: ['plan risk 72 ≥ threshold 70'],
    previews: [],
    requestedAt: day(1),
    expiresAt: day(1, 13),
    ...fields,
  });

  beforeAll(async () => {
    s = await useStack();
  });
  afterAll(() => s?.stop());

  describe('reads', () => {
    // Oldest first; the list answers newest first (requestedAt, then name).
    const seeds = [
      approval('APR-20261101-001', {
        previews: [
          {
            step: 1,
            action: 'RestartDeployment',
            target: 'shop/Deployment/checkout',
            summary: 'pods are replaced one by one',
            diff: '+  restartedAt: 2026-11-01T12:00:00Z\n   Authorization: Bearer abcdefghijklmnopqrstuvwxyz',
            dryRun: true,
          },
          {
            step: 2,
            action: 'ScaleDeployment',
            target: 'shop/Deployment/checkout',
            summary: '',
            diff: '',
            dryRun: false,
            error: 'forbidden',
          },
        ],
      }),
      approval('APR-20261102-001', {
        status: 'approved',
        requestedAt: day(2),
        expiresAt: day(2, 13),
        decidedAt: day(2, 12),
        decidedBy: 'alice',
        comment: 'go',
      }),
      approval('APR-20261103-001', {
        namespace: 'data',
        incident: 'INC-20261103-001',
        status: 'expired',
        requiredRole: 'admin',
        riskScore: 90,
        requestedAt: day(3),
        expiresAt: day(3, 13),
        decidedAt: day(3, 13),
        expiryReason: 'no decision within 1h0m0s',
      }),
      approval('APR-20261104-001', {
        status: 'rejected',
        requestedAt: day(4),
        decidedAt: day(4, 12),
        decidedBy: 'bob',
      }),
    ];
    const names = seeds.map((a) => a.name);
    beforeAll(async () => {
      for (const a of seeds) await createApprovalOnce(a);
    });

    const list = (qs = '') => s.call('GET', `/approvals${qs}`, { token: s.tokens.viewer });
    const itemNames = (body: { items: { name: string }[] }) => body.items.map((i) => i.name);

    it('lists newest first with the spec fields and the extras', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        apiVersion: 'v1',
        kind: 'ApprovalList',
        metadata: { totalCount: 4, page: 1, pageSize: 20 },
      });
      expect(itemNames(res.body)).toEqual([...names].reverse());
      const [rejected, expired, approved, pending] = res.body.items;
      expect(pending).toEqual({
        name: names[0],
        namespace: 'shop',
        status: 'pending',
        incident: 'INC-20261101-001',
        action: 'RestartDeployment Deployment/checkout',
        riskScore: 72,
        requiredRole: 'operator',
        runbook: 'crashloop-restart',
        requestedAt: '2026-11-01T12:00:00.000Z',
        expiresAt: '2026-11-01T13:00:00.000Z',
        plan: `RP-for-${names[0]}`,
        reasons: ['plan risk 72 ≥ threshold 70'],
      });
      expect(approved).toMatchObject({
        status: 'approved',
        decidedAt: '2026-11-02T12:00:00.000Z',
        decidedBy: 'alice',
        comment: 'go',
      });
      expect(approved).not.toHaveProperty('expiresAt');
      expect(expired).toMatchObject({
        status: 'expired',
        requiredRole: 'admin',
        decidedAt: '2026-11-03T13:00:00.000Z',
        expiryReason: 'no decision within 1h0m0s',
      });
      expect(expired).not.toHaveProperty('decidedBy');
      expect(rejected).toMatchObject({ status: 'rejected', decidedBy: 'bob' });
      expect(rejected).not.toHaveProperty('previews'); // the detail's
    });

    it.each([
      ['?status=pending', [0]],
      ['?status=expired', [2]],
      ['?namespace=data', [2]],
      ['?incident=INC-20261101-001', [3, 1, 0]],
      ['?incident=INC-20261101-001&status=rejected', [3]],
    ])('filters %s', async (qs, expected) => {
      const res = await list(qs as string);
      expect(itemNames(res.body)).toEqual((expected as number[]).map((i) => names[i]));
      expect(res.body.metadata.totalCount).toBe((expected as number[]).length);
    });

    it('paginates', async () => {
      const p2 = await list('?page=2&pageSize=3');
      expect(p2.body.metadata).toEqual({ totalCount: 4, page: 2, pageSize: 3 });
      expect(itemNames(p2.body)).toEqual([names[0]]);
    });

    it.each(['?pageSize=101', '?page=0', '?status=decided', '?status=Pending', '?namespace=Shop'])(
      'rejects %s with 400 Invalid request',
      async (qs) => {
        const res = await list(qs);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 400, message: 'Invalid request' });
      },
    );

    it('shows one approval with its previews (no secret in a diff), 404 for an unknown name', async () => {
      const res = await s.call('GET', `/approvals/${names[0]}`, { token: s.tokens.viewer });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ apiVersion: 'v1', kind: 'Approval', name: names[0], status: 'pending' });
      expect(res.body.previews).toEqual([
        {
          step: 1,
          action: 'RestartDeployment',
          target: 'shop/Deployment/checkout',
          summary: 'pods are replaced one by one',
          diff: '+  restartedAt: 2026-11-01T12:00:00Z\n   Authorization: [REDACTED]',
          dryRun: true,
        },
        {
          step: 2,
          action: 'ScaleDeployment',
          target: 'shop/Deployment/checkout',
          summary: '',
          diff: '',
          dryRun: false,
          error: 'forbidden',
        },
      ]);
      const missing = await s.call('GET', '/approvals/APR-20990101-001', { token: s.tokens.viewer });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({ code: 404, message: 'Approval not found' });
    });
  });

  describe('decisions', () => {
    /** An incident, its approval record and the approval's running workflow. */
    async function pendingApproval(requiredRole: UserRole = 'operator') {
      const created = await s.call('POST', '/incidents', {
        token: s.tokens.operator,
        body: { resource: `Deployment/approvals-${++serial}`, signalType: 'HighCPU', severity: 'low' },
      });
      expect(created.status).toBe(201);
      const incident: string = created.body.metadata.name;
      const name = `APR-20261201-${String(100 + serial)}`;
      const plan = `RP-20261201-${String(100 + serial)}`;
      const now = new Date();
      await createApprovalOnce(
        approval(name, {
          key: plan,
          namespace: 'default',
          incident,
          plan,
          requiredRole,
          requestedAt: now,
          expiresAt: new Date(now.getTime() + 24 * 3600_000),
        }),
      );
      await s.client.workflow.start(approvalWorkflow, {
        workflowId: name,
        taskQueue: s.wf.taskQueue,
        args: [{ name, incident, namespace: 'default', plan, requiredRole, ttlMs: 24 * 3600_000 }],
      });
      return { name, incident };
    }
    const decide = (name: string, verb: 'approve' | 'reject', role: UserRole, body?: unknown) =>
      s.call('POST', `/approvals/${name}/${verb}`, { token: s.tokens[role], ...(body !== undefined && { body }) });
    const auditOf = async (name: string, action: string) =>
      (await s.call('GET', `/audit?action=${action}&resource=${name}`, { token: s.tokens.operator })).body.items;

    it('approves as the operator token’s user: recorded, audited, on the timeline; a second decision is a 409', async () => {
      const { name, incident } = await pendingApproval();
      const res = await decide(name, 'approve', 'operator', { comment: 'diff looks right' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        apiVersion: 'v1',
        kind: 'Approval',
        name,
        status: 'approved',
        decidedBy: 'operator-user',
        decidedAt: expect.any(String),
        comment: 'diff looks right',
        previews: [],
      });
      expect(res.body).not.toHaveProperty('expiresAt');

      const audit = await auditOf(name, 'approval.approve');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        user: 'operator-user',
        role: 'operator',
        resourceType: 'Approval',
        namespace: 'default',
        details: { incident, comment: 'diff looks right', requiredRole: 'operator' },
      });
      const timeline = (await s.call('GET', `/incidents/${incident}/timeline`)).body.events;
      expect(timeline).toContainEqual(
        expect.objectContaining({
          type: 'ApprovalDecided',
          source: 'user:operator-user',
          details: expect.objectContaining({ approvalName: name, status: 'approved', decidedBy: 'operator-user' }),
        }),
      );

      const again = await decide(name, 'reject', 'admin');
      expect(again.status).toBe(409);
      expect(again.body.error).toEqual({
        code: 409,
        message: 'Approval already decided',
        details: expect.stringMatching(/^approved by operator-user at \d{4}-\d\d-\d\dT/),
      });
      expect(await auditOf(name, 'approval.reject')).toEqual([]);
    });

    it('rejects with a reason: status rejected, audited approval.reject', async () => {
      const { name } = await pendingApproval();
      const res = await decide(name, 'reject', 'operator', { comment: 'not during the sale' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'rejected',
        decidedBy: 'operator-user',
        comment: 'not during the sale',
      });
      const audit = await auditOf(name, 'approval.reject');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        user: 'operator-user',
        role: 'operator',
        details: { comment: 'not during the sale' },
      });
    });

    it('refuses a viewer (403) and an operator on an admin approval (403); an admin decides it', async () => {
      const { name } = await pendingApproval('admin');
      const viewer = await decide(name, 'approve', 'viewer');
      expect(viewer.status).toBe(403);
      expect(viewer.body.error.message).toBe('Forbidden');
      const operator = await decide(name, 'approve', 'operator');
      expect(operator.status).toBe(403);
      expect(operator.body.error).toEqual({
        code: 403,
        message: 'Forbidden',
        details: expect.stringContaining('needs the admin role'),
      });
      const admin = await decide(name, 'approve', 'admin');
      expect(admin.status).toBe(200);
      expect(admin.body).toMatchObject({ status: 'approved', decidedBy: 'admin-user', requiredRole: 'admin' });
    });

    it('takes the approver from the token only: a body decidedBy is a 400', async () => {
      const { name } = await pendingApproval();
      const res = await decide(name, 'approve', 'operator', { decidedBy: 'mallory' });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('Invalid request');
      const long = await decide(name, 'approve', 'operator', { comment: 'x'.repeat(2001) });
      expect(long.status).toBe(400);
      expect((await s.call('GET', `/approvals/${name}`)).body.status).toBe('pending');
    });

    it('answers 404 for an unknown approval', async () => {
      const res = await decide('APR-20990101-001', 'approve', 'operator');
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe('Approval not found');
    });

    it('answers from the store: an expired approval is a 409 saying when and why', async () => {
      await createApprovalOnce(
        approval('APR-20261201-001', {
          status: 'expired',
          decidedAt: day(20, 12),
          expiryReason: 'incident resolved',
        }),
      );
      const res = await decide('APR-20261201-001', 'approve', 'operator');
      expect(res.status).toBe(409);
      expect(res.body.error).toEqual({
        code: 409,
        message: 'Approval already decided',
        details: 'expired at 2026-11-20T12:00:00.000Z: incident resolved',
      });
    });

    it('answers 503 for a pending approval whose workflow is not running', async () => {
      await createApprovalOnce(approval('APR-20261201-002', {}));
      const res = await decide('APR-20261201-002', 'approve', 'operator');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    });
  });
});
