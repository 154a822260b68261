import type { Activities } from '../../activities';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook } from '../../store/runbooks';
import { useStack } from '../harness/stack';

/**
 * The triage makes the first attempt's plan (workflows/incident/triage.ts),
 * against the real worker, store and time-skipping server: the plan runs as one the workflow
 * asked for would, and an incident resolved while its triage ran never starts the plan it got.
 */

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
/** Incidents resolved by a person the moment their triage has finished, before it answers. */
const resolveAfterTriage = new Set<string>();
const resolveAnswers: number[] = [];

beforeAll(async () => {
  s = await useStack({
    wrapActivities: (activities: Activities) => ({
      ...activities,
      drainAndTriage: async (input) => {
        const opened = await activities.drainAndTriage(input);
        if (resolveAfterTriage.delete(input.name)) {
          const res = await s.call('POST', `/incidents/${input.name}/resolve?namespace=shop`, {
            token: s.tokens.operator,
            body: { resolution: 'fixed by hand during the analysis' },
          });
          resolveAnswers.push(res.status);
        }
        return opened;
      },
    }),
  });
  const spec = runbookSpecSchema.parse({
    version: '1.0.0',
    name: 'custom-wait-fix',
    description: 'test runbook',
    category: 'custom',
    automated: true,
    severity: ['low'],
    targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
    steps: [{ type: 'Wait', params: { duration: '10s' } }],
    verificationWindow: '1m',
  });
  expect((await createRunbook(spec)).created).toBe(true);
}, 120_000);

afterAll(() => s?.stop());

async function open(resource: string) {
  const res = await s.call('POST', '/incidents', {
    token: s.tokens.operator,
    body: { resource, namespace: 'shop', signalType: 'Custom', severity: 'low', description: 'test' },
  });
  expect(res.status).toBe(201);
  return res.body.metadata.name as string;
}
const get = async (path: string): Promise<Json> => (await s.call('GET', path, { token: s.tokens.viewer })).body;
const types = async (name: string): Promise<string[]> =>
  (await get(`/incidents/${name}/timeline`)).events.map((e: Json) => e.type);

describe('the first plan made by the triage', () => {
  it('runs and resolves the incident as a plan the workflow prepared would', async () => {
    const name = await open('Deployment/ledger');
    const deadline = Date.now() + 120_000;
    while ((await get(`/incidents/${name}`)).status.state !== 'Resolved') {
      if (Date.now() > deadline) throw new Error(`${name} not resolved: ${await types(name)}`);
      await s.wf.env.sleep(30_000);
    }
    const [plan] = (await get(`/remediations?incident=${name}`)).items;
    expect(plan).toMatchObject({ state: 'Completed', attempt: 1, runbook: 'custom-wait-fix' });
    expect(await types(name)).toEqual(
      expect.arrayContaining(['RunbookMatch', 'RemediationStarted', 'RemediationCompleted', 'Resolved']),
    );
    expect((await get(`/incidents/${name}`)).status.remediationAttempts).toBe(1);
  });

  it('never starts the plan of an incident resolved while its triage ran, and says so', async () => {
    const name = await open('Deployment/invoices');
    resolveAfterTriage.add(name);
    const plans = await s.eventually(
      async () => (await get(`/remediations?incident=${name}`)).items as Json[],
      (items) => items.length === 1 && items[0].state === 'Failed',
    );
    expect(resolveAnswers).toEqual([200]);
    expect(plans[0].result).toBe('cancelled: the incident was resolved before the plan started');
    expect((await get(`/incidents/${name}`)).status).toMatchObject({
      state: 'Resolved',
      resolution: 'fixed by hand during the analysis',
    });
    const events = await types(name);
    expect(events).toEqual(expect.arrayContaining(['RemediationStarted', 'RemediationFailed', 'Resolved']));
    expect(events).not.toContain('ActionExecuted');
  });
});
