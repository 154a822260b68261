import { type RunbookInput } from '../../domain/runbook';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook } from '../../store/runbooks';
import { useGateway } from '../harness/gateway';
import { useStepReceiver } from '../harness/step-receiver';

/**
 * Deciding a remediation approval from chat (issue 10 §2): the approval's notice reaches the home
 * channel with the commands that decide it; `/approve` and `/reject` decide as `webhook:<user>`
 * (the gateway's role, operator), through the approval's workflow. Steps are HttpRequests
 * against a real listener; each scenario has its own runbook category.
 */

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let gw: Awaited<ReturnType<typeof useGateway>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let baseUrl = '';

beforeAll(async () => {
  receiver = await useStepReceiver();
  baseUrl = receiver.baseUrl;
  gw = await useGateway({ env: { FOGHORN_WEBHOOK_HOME_CHANNEL: 'ops-home', FOGHORN_VERIFY_WINDOW: '1m' } });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await receiver?.stop();
});

const hits = (path: string) => receiver.hits(path);

async function runbook(name: string, category: RunbookInput['category'], path: string): Promise<void> {
  const spec = runbookSpecSchema.parse({
    name,
    category,
    version: '1.0.0',
    description: 'test runbook',
    approvalRequired: true,
    severity: ['low', 'critical'],
    steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${baseUrl}${path}`, expectStatus: 200 } }],
  });
  expect((await createRunbook(spec)).created).toBe(true);
}

async function open(resource: string, signalType: string, severity = 'low'): Promise<string> {
  const res = await gw.call('POST', '/incidents', {
    token: gw.tokens.operator,
    body: { resource, namespace: 'shop', signalType, severity },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}

const get = (path: string) => gw.call('GET', path, { token: gw.tokens.viewer });
const plans = async (name: string): Promise<Json[]> => (await get(`/remediations?incident=${name}`)).body.items;
const say = async (user: string, text: string) =>
  (await gw.reply(await gw.send({ chat_id: 'c-approvals', user_id: user, text }))).body;

/**
 * The approval notice of `incident` in the home channel and its approval's name, once the
 * approval's workflow waits for a decision (the notice is its last activity before the timer).
 */
async function notice(incident: string): Promise<{ text: string; approval: string }> {
  const posted = await gw.receiver.waitFor(
    (c) =>
      c.body.chat_id === 'ops-home' &&
      c.body.kind === 'proactive' &&
      c.body.text.includes(incident) &&
      c.body.text.includes('/approve'),
    60_000,
  );
  const approval = /Reply \/approve (APR-\d{8}-\d{3,})/.exec(posted.body.text)?.[1];
  expect(approval).toBeDefined();
  const handle = gw.client.workflow.getHandle(approval!);
  await gw.eventually(
    async () => {
      const [history, described] = await Promise.all([handle.fetchHistory(), handle.describe()]);
      const timer = history.events?.some((e) => e.timerStartedEventAttributes) ?? false;
      return timer && (described.raw.pendingActivities?.length ?? 0) === 0;
    },
    Boolean,
    60_000,
  );
  return { text: posted.body.text, approval: approval! };
}

/** Polls the incident until `state`, skipping 30 s of workflow time between polls (the verification window). */
async function untilState(name: string, state: string): Promise<Json> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const r = await get(`/incidents/${name}`);
    if (r.body.status?.state === state) return r.body;
    if (Date.now() > deadline)
      throw new Error(`${name} is ${r.body.status?.state}, not ${state}; plans: ${JSON.stringify(await plans(name))}`);
    await gw.wf.env.sleep(30_000);
  }
}

describe('approving remediations from chat', () => {
  it('/approve from the home channel notice: decided by webhook:<user>, the plan runs, the incident resolves', async () => {
    await runbook('chat-approve-http', 'custom', '/chat/fix');
    const incident = await open('Deployment/cart', 'Custom');
    const { text, approval } = await notice(incident);
    expect(text).toContain(`Approval ${approval} needed (operator, risk 20) for ${incident}`);
    expect(text).toContain('Why: runbook chat-approve-http requires approval.');
    expect(text).toContain(`or /reject ${approval} [reason] before `);
    expect(hits('/chat/fix')).toBe(0);

    const reply = await say('alice', `/approve ${approval} go ahead`);
    expect(reply.kind).toBe('final');
    expect(reply.text).toContain(`Approved ${approval} (by webhook:alice)`);
    const decided = (await get(`/approvals/${approval}`)).body;
    expect(decided).toMatchObject({ status: 'approved', decidedBy: 'webhook:alice', comment: 'go ahead' });
    const audit = await gw.call('GET', `/audit?action=approval.approve&resource=${approval}`, {
      token: gw.tokens.operator,
    });
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({ user: 'webhook:alice', role: 'operator' });

    const again = await say('bob', `/approve ${approval}`);
    expect(again.kind).toBe('error');
    expect(again.text).toContain('Approval already decided');

    await untilState(incident, 'Resolved');
    expect(hits('/chat/fix')).toBe(1);
    const [plan] = await plans(incident);
    expect(plan).toMatchObject({ state: 'Completed', approval });
  });

  it('/reject with a reason: the plan does not run, the incident is escalated', async () => {
    await runbook('chat-reject-http', 'latency', '/chat/reject');
    const incident = await open('Deployment/search', 'HighLatency');
    const { approval } = await notice(incident);

    const reply = await say('bob', `/reject ${approval} wait for the release`);
    expect(reply.kind).toBe('final');
    expect(reply.text).toContain(`Rejected ${approval} (by webhook:bob)`);
    await gw.eventually(
      () => get(`/incidents/${incident}`),
      (r) => r.body.status?.state === 'Escalated',
      60_000,
    );
    const [plan] = await plans(incident);
    expect(plan).toMatchObject({
      state: 'Failed',
      result: `approval ${approval} rejected by webhook:bob: wait for the release`,
    });
    expect(hits('/chat/reject')).toBe(0);
  });

  it('refuses a chat approval of an admin-only plan (the gateway acts as operator)', async () => {
    await runbook('chat-admin-http', 'oomkill', '/chat/admin');
    const incident = await open('Deployment/cache', 'OOMKilled', 'critical'); // plan risk 90
    const { approval } = await notice(incident);

    const reply = await say('carol', `/approve ${approval}`);
    expect(reply.kind).toBe('error');
    expect(reply.text).toContain('needs the admin role');
    expect((await get(`/approvals/${approval}`)).body.status).toBe('pending');

    // An admin decides it over the API (and ends the test's workflows).
    const rejected = await gw.call('POST', `/approvals/${approval}/reject`, { token: gw.tokens.admin });
    expect(rejected.status).toBe(200);
    expect(hits('/chat/admin')).toBe(0);
  });
});
