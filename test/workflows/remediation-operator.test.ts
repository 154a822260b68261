import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook } from '../../store/runbooks';
import { approvalAwaitingDecision } from '../harness/approvals';
import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';
import { dnsDownWebhook } from '../fixtures/alertmanager';
import { createGatedRunbook } from '../fixtures/runbooks';

/**
 * People acting while a plan runs (issue 10 §4): acknowledging does not stop automation;
 * resolving cancels the running plan cleanly — the step in flight ends, nothing after it runs,
 * and the plan and the timeline say so.
 */

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let baseUrl = '';
const hits = () => receiver.received.map((r) => r.url);

beforeAll(async () => {
  receiver = await useStepReceiver();
  baseUrl = receiver.baseUrl;
  s = await useStack();
  // Category `custom` has no built-in runbook: this is the only strategy.
  const created = await createRunbook(
    runbookSpecSchema.parse({
      name: 'custom-slow-fix',
      category: 'custom',
      description: 'two calls with a long wait between them',
      version: '1.0.0',
      automated: true,
      severity: ['low'],
      steps: [
        { type: 'HttpRequest', params: { method: 'POST', url: `${baseUrl}/before/{{resourceName}}` } },
        { type: 'Wait', params: { duration: '10m' } },
        { type: 'HttpRequest', params: { method: 'POST', url: `${baseUrl}/after/{{resourceName}}` } },
      ],
    }),
  );
  expect(created.created).toBe(true);
  await createGatedRunbook(baseUrl);
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const planOf = async (incident: string): Promise<Json> =>
  (await get(`/remediations?incident=${incident}`)).body.items[0];

async function open(resource: string): Promise<string> {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: { resource, namespace: 'shop', signalType: 'Custom', severity: 'low', description: 'test' },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name;
}

/** The plan is in its Wait step: the first call made, the durable timer started. */
async function waiting(incident: string): Promise<Json> {
  return s.eventually(
    () => planOf(incident),
    (p) => p?.state === 'Executing' && p.actions[0]?.outcome === 'ok',
    60_000,
  );
}

it('acknowledging during remediation does not stop it: the plan finishes and resolves the incident', async () => {
  const name = await open('Deployment/ack-me');
  await waiting(name);
  const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
    token: s.tokens.operator,
    body: { acknowledgedBy: 'alice', message: 'watching the fix' },
  });
  expect(ack.status).toBe(200);
  expect(ack.body.status).toMatchObject({ state: 'Remediating', acknowledged: true });
  for (let i = 0; i < 60 && (await get(`/incidents/${name}`)).body.status.state !== 'Resolved'; i++)
    await s.wf.env.sleep(60_000);
  const plan = await planOf(name);
  expect(plan.state).toBe('Completed');
  expect(plan.actions.map((a: Json) => a.outcome)).toEqual(['ok', 'ok', 'ok']);
  expect(hits()).toEqual(expect.arrayContaining(['/before/ack-me', '/after/ack-me']));
});

it('resolving during remediation cancels the plan after its step in flight; nothing after it runs', async () => {
  const name = await open('Deployment/stop-me');
  await waiting(name);
  const res = await s.call('POST', `/incidents/${name}/resolve?namespace=shop`, {
    token: s.tokens.operator,
    body: { resolution: 'fixed it by hand' },
  });
  expect(res.status).toBe(200);
  expect(res.body.status).toMatchObject({ state: 'Resolved', resolution: 'fixed it by hand' });
  const plan = await s.eventually(
    () => planOf(name),
    (p) => p.state === 'Failed',
    60_000,
  );
  expect(plan.result).toMatch(/^cancelled in state Executing: the incident was resolved while the plan ran/);
  expect(plan.actions.map((a: Json) => a.outcome ?? null)).toEqual(['ok', null, null]);
  await s.wf.env.sleep(15 * 60_000); // long after the wait would have ended
  expect(hits()).toContain('/before/stop-me');
  expect(hits()).not.toContain('/after/stop-me');
  const events: Json[] = (await get(`/incidents/${name}/timeline`)).body.events;
  const failed = events.find((e) => e.type === 'RemediationFailed');
  expect(failed.message).toContain('cancelled');
  expect(events.filter((e) => e.type === 'Resolved')).toHaveLength(1);
  expect(events.find((e) => e.type === 'Resolved').source).toBe('user:operator-user');
});

it('the alert clears at source while the plan waits for its approval: the approval ends and the source resolves it', async () => {
  const alert = (status: 'firing' | 'resolved') =>
    dnsDownWebhook(status, '2026-11-23T10:00:00Z', '2026-11-23T10:05:00Z');
  const fired = await s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert('firing') });
  expect(fired.status).toBe(202);
  const listed = await s.eventually(
    () => get('/approvals?status=pending'),
    (r) => r.body.items?.some((a: Json) => a.runbook === 'network-gated-fix'),
    60_000,
  );
  const approval = listed.body.items.find((a: Json) => a.runbook === 'network-gated-fix');
  await approvalAwaitingDecision(s.client, approval.name);

  const cleared = await s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert('resolved') });
  expect(cleared.status).toBe(202);
  const incident = await s.eventually(
    () => get(`/incidents/${approval.incident}`),
    (r) => r.body.status.state === 'Resolved',
    60_000,
  );
  expect(incident.body.status.resolution).toBe('Resolved at source');
  const ended = (await get(`/approvals/${approval.name}`)).body;
  expect(ended.status).toBe('expired');
  const plan = await planOf(approval.incident);
  expect(plan).toMatchObject({ state: 'Failed' });
  expect(plan.result).toContain('the alert resolved at source');
  expect(hits().filter((h) => h.startsWith('/gated/'))).toHaveLength(0);
});
