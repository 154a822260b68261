import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook } from '../../store/runbooks';
import { useStack } from '../harness/stack';
import { useStepReceiver } from '../harness/step-receiver';

/**
 * A plan runs in its incident's workflow. An operator must not wait for a slow
 * service the plan calls: an acknowledge and a snooze sent while an HttpRequest step waits for
 * its answer are answered at once, and the plan then finishes with its step recorded once. (As a
 * local activity, the step kept the incident's workflow task open: each of the updates' round
 * trips waited for the task's heartbeat, and the two took 64 s here; so it is an activity there.)
 * On the dev server, in real time, as in production.
 */

jest.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useStepReceiver>>;
let answer: () => void = () => undefined;
/** Answered when the test says so, or 3 minutes after it came (a failing test ends instead of hanging). */
const hold = () =>
  new Promise<number>((resolve) => {
    answer = () => resolve(200);
    setTimeout(answer, 180_000).unref();
  });

beforeAll(async () => {
  receiver = await useStepReceiver((url) => (url.startsWith('/held') ? hold() : 200));
  s = await useStack({ realTime: true });
  const created = await createRunbook(
    runbookSpecSchema.parse({
      name: 'custom-held-call',
      category: 'custom', // no built-in runbook has it: this is the only strategy
      description: 'one call to a service that answers late',
      version: '1.0.0',
      automated: true,
      severity: ['low'],
      steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${receiver.baseUrl}/held/{{resourceName}}` } }],
      verificationWindow: '1s',
    }),
  );
  expect(created.created).toBe(true);
}, 120_000);

afterAll(async () => {
  answer();
  await s?.stop();
  await receiver?.stop();
});

const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });

it("an acknowledge and a snooze sent while a plan's HTTP step waits for its answer are answered before it", async () => {
  const opened = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: {
      resource: 'Deployment/slow-svc',
      namespace: 'shop',
      signalType: 'Custom',
      severity: 'low',
      description: 'x',
    },
  });
  expect(opened.status).toBe(201);
  const name: string = opened.body.metadata.name;
  await s.eventually(
    async () => receiver.hits('/held/slow-svc'),
    (n) => n === 1,
    60_000,
  );

  const ack = await s.call('POST', `/incidents/${name}/acknowledge`, {
    token: s.tokens.operator,
    body: { acknowledgedBy: 'alice', message: 'watching the fix' },
  });
  expect(ack.status).toBe(200);
  expect(ack.body.status).toMatchObject({ state: 'Remediating', acknowledged: true });
  const snooze = await s.call('POST', `/incidents/${name}/snooze`, {
    token: s.tokens.operator,
    body: { duration: '10m', reason: 'fix in flight', snoozedBy: 'alice' },
  });
  expect(snooze.status).toBe(200);
  // Both answered while the request still waited for its answer.
  const plan: Json = (await get(`/remediations?incident=${name}`)).body.items[0];
  expect(plan).toMatchObject({ state: 'Executing' });
  expect(plan.actions[0].outcome).toBeUndefined();

  answer();
  const resolved = await s.eventually(
    () => get(`/incidents/${name}`),
    (r) => r.body.status.state === 'Resolved',
    120_000,
  );
  expect(resolved.body.status).toMatchObject({
    acknowledged: true,
    resolution: expect.stringMatching(/^Remediated automatically/),
  });
  const done: Json = (await get(`/remediations?incident=${name}`)).body.items[0];
  expect(done).toMatchObject({ state: 'Completed' });
  expect(done.actions.map((a: Json) => a.outcome)).toEqual(['ok']);
  expect(receiver.hits('/held/slow-svc')).toBe(1);
});
