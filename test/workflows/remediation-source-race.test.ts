import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';
import { dnsDownWebhook } from '../fixtures/alertmanager';
import { createGatedRunbook } from '../fixtures/runbooks';

/**
 * An alert that clears at source as its plan starts (issue 10 §4 and the hardening issue's
 * "nothing accepted is lost"): the resolution lands while the plan is made, starting, or asking
 * for its approval, and each must end the same way. On the dev server, in real time. The plan
 * runs in the incident's run and is told through a variable: a child workflow, which a real
 * server starts in a task of its own, would drop a signal sent before that task ran, and the
 * plan would wait for its approval until it expired.
 */

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;

beforeAll(async () => {
  receiver = await useStepReceiver();
  s = await useStack({ realTime: true });
  await createGatedRunbook(receiver.baseUrl);
}, 120_000);

afterAll(async () => {
  await s?.stop();
  await receiver?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
const planOf = async (incident: string): Promise<Json> =>
  (await get(`/remediations?incident=${incident}`)).body.items[0];

it.each(['resolver-a', 'resolver-b', 'resolver-c'])(
  'the alert on %s clears as its plan starts: the source resolves the incident, and no signal to the plan is dropped',
  async (deployment) => {
    const alert = (status: 'firing' | 'resolved') => {
      const payload = dnsDownWebhook(status, '2026-11-23T11:00:00Z', '2026-11-23T11:05:00Z');
      payload.alerts[0].labels.deployment = deployment;
      payload.alerts[0].fingerprint = `dns-${deployment}`;
      return payload;
    };
    const fired = await s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert('firing') });
    expect(fired.status).toBe(202);
    const incident: string = fired.body.items[0].incident;
    // The plan's record is written by the triage, just before the plan starts.
    await s.eventually(
      () => planOf(incident),
      (p) => p !== undefined,
      60_000,
    );
    const cleared = await s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body: alert('resolved') });
    expect(cleared.status).toBe(202);

    const resolved = await s.eventually(
      () => get(`/incidents/${incident}`),
      (r) => r.body.status.state === 'Resolved',
      60_000,
    );
    expect(resolved.body.status.resolution).toBe('Resolved at source');
    const ended = await s.eventually(
      () => planOf(incident),
      (p) => p.state === 'Failed',
      60_000,
    );
    expect(ended.result).toMatch(/resolved at source|resolved before the plan started/);
    const pending = (await get('/approvals?status=pending')).body.items;
    expect(pending.filter((a: Json) => a.incident === incident)).toEqual([]);
    expect(receiver.received.map((r) => r.url)).not.toContain(`/gated/${deployment}`);
    // The plan ran in the incident's run and was told by a variable: no child
    // workflow, no signal for the server to drop.
    const events = (await s.client.workflow.getHandle(incident).fetchHistory()).events ?? [];
    const children = events.flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? [],
    );
    expect(children.filter((type) => type !== 'approvalWorkflow')).toEqual([]);
    expect(events.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
  },
);
