import { type RunbookInput } from '../../domain/runbook';
import { runbookSpecSchema } from '../../contracts/runbooks';
import type { UserRole } from '../../domain/roles';
import { createRunbook } from '../../store/runbooks';
import { APPROVAL_STATUS, INCIDENT, REMEDIATION_STATE } from '../../workflows/search-attributes';
import { approvalAwaitingDecision } from '../harness/approvals';
import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';

/**
 * Approvals inside the remediation engine (issue 10 §2): a plan that needs a person waits in its
 * APR- child workflow; approve runs it, reject and expiry escalate, a person's resolve cancels it,
 * and the circuit breaker asks first after three failed plans of a runbook. Steps are HttpRequests
 * against a real listener (no cluster). Each scenario uses its own category, so only its runbook
 * is a candidate (the built-in runbooks of these categories act on Kubernetes: skipped here).
 * Time skips only when a test calls `s.wf.env.sleep`; none does while an approval must stay pending.
 */

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let baseUrl = '';

beforeAll(async () => {
  receiver = await useStepReceiver((url) => (url.startsWith('/teapot') ? 418 : 200));
  baseUrl = receiver.baseUrl;
  s = await useStack({ env: { FOGHORN_VERIFY_WINDOW: '1m' } });
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
});

const hits = (path: string) => receiver.hits(path);

/** A runbook of one HttpRequest step to `path` on the listener. */
async function runbook(
  name: string,
  category: RunbookInput['category'],
  path: string,
  extra: Partial<RunbookInput> = {},
): Promise<void> {
  const spec = runbookSpecSchema.parse({
    name,
    category,
    version: '1.0.0',
    description: 'test runbook',
    severity: ['low', 'critical'],
    steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${baseUrl}${path}`, expectStatus: 200 } }],
    ...extra,
  });
  expect((await createRunbook(spec)).created).toBe(true);
}

async function open(resource: string, signalType: string, severity = 'low'): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: { resource, namespace: 'shop', signalType, severity, description: 'approval test' },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const timeline = async (name: string): Promise<Json[]> => (await get(`/incidents/${name}/timeline`)).body.events;
const plans = async (name: string): Promise<Json[]> => (await get(`/remediations?incident=${name}`)).body.items;
const approval = async (name: string): Promise<Json> => (await get(`/approvals/${name}`)).body;
const audit = async (action: string, resource: string): Promise<Json[]> =>
  (await s.call('GET', `/audit?action=${action}&resource=${resource}`, { token: s.tokens.operator })).body.items;
const decide = (name: string, verb: 'approve' | 'reject', role: UserRole, comment?: string) =>
  s.call('POST', `/approvals/${name}/${verb}`, { token: s.tokens[role], ...(comment && { body: { comment } }) });

/** Real-time polling (time skipping stays off: a pending approval must not expire meanwhile). */
const until = <T>(probe: () => Promise<T>, check: (v: T) => boolean) => s.eventually(probe, check, 60_000);

/** Polls the incident until `state`; with `skipTime`, 30 s of workflow time pass between polls (verification timers). */
async function untilState(name: string, state: string, skipTime = false): Promise<Json> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const r = await get(`/incidents/${name}`);
    if (r.body.status?.state === state) return r.body;
    if (Date.now() > deadline)
      throw new Error(`${name} is ${r.body.status?.state}, not ${state}; plans: ${JSON.stringify(await plans(name))}`);
    if (skipTime) await s.wf.env.sleep(30_000);
    else await new Promise((r) => setTimeout(r, 200));
  }
}

/** The incident's pending approval once its workflow waits for a decision (see approvalAwaitingDecision). */
async function pendingApprovalOf(incident: string): Promise<Json> {
  const list = await until(
    () => get(`/approvals?incident=${incident}&status=pending`),
    (r) => r.body.items?.length === 1,
  );
  const pending = list.body.items[0];
  await approvalAwaitingDecision(s.client, pending.name);
  return pending;
}

describe('remediation plans that need an approval', () => {
  it('waits for an operator; approved, the step runs and the incident is resolved by system', async () => {
    await runbook('approval-http-fix', 'custom', '/approve/fix', { approvalRequired: true });
    const incident = await open('Deployment/cart', 'Custom');

    const pending = await pendingApprovalOf(incident);
    expect(pending).toMatchObject({
      status: 'pending',
      incident,
      namespace: 'shop',
      requiredRole: 'operator',
      runbook: 'approval-http-fix',
      riskScore: 20, // Custom/low 10 + HttpRequest 10
      expiresAt: expect.any(String),
    });
    const aprName: string = pending.name;
    expect(aprName).toMatch(/^APR-\d{8}-\d{3,}$/);

    const detail = await approval(aprName);
    expect(detail.action).toBe(`HttpRequest POST ${baseUrl}/approve/fix`); // never headers or body
    expect(detail.reasons).toEqual(['runbook approval-http-fix requires approval']);
    expect(detail.previews).toEqual([]); // no Kubernetes step: nothing to preview

    const [plan] = await plans(incident);
    expect(plan).toMatchObject({
      state: 'Pending',
      approvalRequired: true,
      approvalReasons: ['runbook approval-http-fix requires approval'],
    });
    expect(pending.plan).toBe(plan.name);
    await until(
      () => plans(incident),
      (p) => p[0]?.approval === aprName,
    );

    const required = await until(
      () => timeline(incident),
      (events) => events.some((e) => e.type === 'ApprovalRequired'),
    );
    expect(required.find((e) => e.type === 'ApprovalRequired')).toMatchObject({
      source: 'approval-engine',
      details: { approvalName: aprName, requiredRole: 'operator', plan: plan.name },
    });

    const aprAttrs = (await s.client.workflow.getHandle(aprName).describe()).typedSearchAttributes;
    expect(aprAttrs.get(APPROVAL_STATUS)).toBe('pending');
    // The plan runs in its incident's workflow, which says its state.
    const rpAttrs = (await s.client.workflow.getHandle(incident).describe()).typedSearchAttributes;
    expect(rpAttrs.get(REMEDIATION_STATE)).toBe('Pending');
    expect(rpAttrs.get(INCIDENT)).toBe(incident);
    expect((await get(`/incidents/${incident}`)).body.status.state).toBe('Remediating');
    expect(hits('/approve/fix')).toBe(0); // nothing runs before the decision

    const viewer = await decide(aprName, 'approve', 'viewer');
    expect(viewer.status).toBe(403);

    const approved = await decide(aprName, 'approve', 'operator', 'looks safe');
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decidedBy: 'operator-user', comment: 'looks safe' });

    const again = await decide(aprName, 'reject', 'admin');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      message: 'Approval already decided',
      details: expect.stringMatching(/^approved by operator-user at /),
    });

    const resolved = await untilState(incident, 'Resolved', true);
    expect(resolved.status.resolution).toContain(`Remediated automatically by plan ${plan.name}`);
    expect(hits('/approve/fix')).toBe(1);
    const [done] = await plans(incident);
    expect(done).toMatchObject({ name: plan.name, state: 'Completed', approval: aprName });

    const events = await timeline(incident);
    expect(events.find((e) => e.type === 'ApprovalDecided')).toMatchObject({
      source: 'user:operator-user',
      details: { approvalName: aprName, status: 'approved', decidedBy: 'operator-user', comment: 'looks safe' },
    });
    expect(events.find((e) => e.type === 'Resolved')).toMatchObject({
      source: 'remediation-engine',
      details: { resolvedBy: 'system' },
    });

    const approvals = await audit('approval.approve', aprName);
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ user: 'operator-user', role: 'operator', details: { plan: plan.name } });
    expect(await audit('approval.reject', aprName)).toEqual([]);

    const after = await s.client.workflow.getHandle(aprName).describe();
    expect(after.typedSearchAttributes.get(APPROVAL_STATUS)).toBe('approved');
  });

  it('needs an admin when the plan risk is 85 or more: an operator is refused, an admin approves', async () => {
    await runbook('approval-oom-http', 'oomkill', '/admin/fix', { targets: { signalTypes: ['OOMKilled'] } });
    const incident = await open('Deployment/cache', 'OOMKilled', 'critical'); // risk 40 + 40

    const pending = await pendingApprovalOf(incident);
    expect(pending).toMatchObject({ requiredRole: 'admin', riskScore: 90, runbook: 'approval-oom-http' });
    expect(pending.reasons).toEqual(['plan risk 90 ≥ threshold 70']);
    const [plan] = await plans(incident);
    expect(plan).toMatchObject({ riskScore: 90, approvalRequired: true });

    const operator = await decide(pending.name, 'approve', 'operator');
    expect(operator.status).toBe(403);
    expect(operator.body.error.details).toContain('needs the admin role');
    expect((await approval(pending.name)).status).toBe('pending');

    const admin = await decide(pending.name, 'approve', 'admin');
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ status: 'approved', decidedBy: 'admin-user', requiredRole: 'admin' });
    await untilState(incident, 'Resolved', true);
    expect(hits('/admin/fix')).toBe(1);
  });

  it('rejected: the plan fails naming the rejection, the incident is escalated', async () => {
    await runbook('approval-manual-http', 'latency', '/reject/fix', { automated: false });
    const incident = await open('Deployment/search', 'HighLatency');

    const pending = await pendingApprovalOf(incident);
    expect(pending.reasons).toEqual(['runbook approval-manual-http is manual (not automated)']);
    const rejected = await decide(pending.name, 'reject', 'operator', 'not during the sale');
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'rejected', decidedBy: 'operator-user' });

    await untilState(incident, 'Escalated');
    const [plan] = await plans(incident);
    expect(plan.state).toBe('Failed');
    expect(plan.result).toBe(`approval ${pending.name} rejected by operator-user: not during the sale`);
    const events = await timeline(incident);
    expect(events.find((e) => e.type === 'Escalation')?.message).toBe(
      `Remediation plan ${plan.name} was not approved (${plan.result}); escalated to on-call`,
    );
    expect(events.find((e) => e.type === 'ApprovalDecided')?.details).toMatchObject({ status: 'rejected' });
    expect(events.filter((e) => e.type === 'ActionExecuted')).toEqual([]);
    const rejections = await audit('approval.reject', pending.name);
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatchObject({ user: 'operator-user', details: { comment: 'not during the sale' } });
    expect(hits('/reject/fix')).toBe(0);
  });

  it('expires without a decision after 30 minutes of workflow time: escalated, the step never ran', async () => {
    await runbook('approval-expiry-http', 'scaling', '/expiry/fix', { approvalRequired: true });
    const incident = await open('Deployment/worker', 'HighCPU');

    const pending = await pendingApprovalOf(incident);
    await s.wf.env.sleep(31 * 60_000);

    const expired = await until(
      () => approval(pending.name),
      (a) => a.status === 'expired',
    );
    expect(expired.expiryReason).toBe('no decision within 30m0s');
    expect(expired).not.toHaveProperty('decidedBy');
    await untilState(incident, 'Escalated');
    const [plan] = await plans(incident);
    expect(plan).toMatchObject({
      state: 'Failed',
      result: `approval ${pending.name} expired: no decision within 30m0s`,
    });
    const events = await timeline(incident);
    expect(events.find((e) => e.type === 'ApprovalExpired')).toMatchObject({
      details: { approvalName: pending.name, reason: 'no decision within 30m0s' },
    });
    expect(events.find((e) => e.type === 'Escalation')?.message).toContain('was not approved');
    expect(events.filter((e) => e.type === 'ActionExecuted')).toEqual([]);
    expect(hits('/expiry/fix')).toBe(0);
    const attrs = (await s.client.workflow.getHandle(pending.name).describe()).typedSearchAttributes;
    expect(attrs.get(APPROVAL_STATUS)).toBe('expired');

    const late = await decide(pending.name, 'approve', 'operator');
    expect(late.status).toBe(409);
    expect(late.body.error.details).toMatch(/^expired at .*: no decision within 30m0s$/);
  });

  it('a person resolving the incident while the approval waits expires it ("incident resolved") and cancels the plan', async () => {
    await runbook('approval-resolve-http', 'network', '/resolve/fix', { approvalRequired: true });
    const incident = await open('Deployment/gateway', 'NetworkUnavailable');
    const pending = await pendingApprovalOf(incident);

    const res = await s.call('POST', `/incidents/${incident}/resolve?namespace=shop`, {
      token: s.tokens.operator,
      body: { resolution: 'fixed by hand' },
    });
    expect(res.status).toBe(200);

    const expired = await until(
      () => approval(pending.name),
      (a) => a.status === 'expired',
    );
    expect(expired.expiryReason).toBe('incident resolved');
    const [plan] = await until(
      () => plans(incident),
      (p) => p[0]?.state === 'Failed',
    );
    expect(plan.result).toBe(`approval ${pending.name} expired: incident resolved`);
    expect((await untilState(incident, 'Resolved')).status.resolution).toBe('fixed by hand');
    const events = await timeline(incident);
    expect(events.find((e) => e.type === 'Resolved')).toMatchObject({
      source: 'user:operator-user',
      details: { resolvedBy: 'operator-user' },
    });
    expect(events.find((e) => e.type === 'ApprovalExpired')?.details.reason).toBe('incident resolved');
    expect(events.filter((e) => e.type === 'ActionExecuted')).toEqual([]);
    expect(hits('/resolve/fix')).toBe(0);
  });

  it('circuit breaker: after 3 failed plans of a runbook within an hour, its next plan needs approval', async () => {
    await runbook('breaker-teapot', 'crashloop', '/teapot', { maxAttempts: 1 });
    const failing = await Promise.all([1, 2, 3].map((n) => open(`Deployment/breaker-${n}`, 'CrashLoopBackOff')));
    for (const incident of failing) {
      await untilState(incident, 'Escalated');
      const [plan] = await plans(incident);
      expect(plan).toMatchObject({ state: 'Failed', approvalRequired: false, runbook: 'breaker-teapot' });
      expect(plan.result).toContain('step 1 HttpRequest failed');
    }
    expect(hits('/teapot')).toBe(3);

    const incident = await open('Deployment/breaker-4', 'CrashLoopBackOff');
    const pending = await pendingApprovalOf(incident);
    const reason = 'circuit breaker: 3 plans of runbook breaker-teapot failed in the last hour';
    expect(pending.reasons).toEqual([reason]); // risk 35 is under the threshold, the runbook is automated
    const [plan] = await plans(incident);
    expect(plan).toMatchObject({ approvalRequired: true, approvalReasons: [reason] });
    const started = (await timeline(incident)).find((e) => e.type === 'RemediationStarted');
    expect(started.details).toMatchObject({ plan: plan.name, approvalRequired: true, approvalReasons: [reason] });
    expect(started.message).toContain('(approval required)');

    expect((await decide(pending.name, 'reject', 'operator', 'still broken')).status).toBe(200);
    await untilState(incident, 'Escalated');
    expect(hits('/teapot')).toBe(3);
  });
});
