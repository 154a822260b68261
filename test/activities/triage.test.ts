import { MockActivityEnvironment } from '@temporalio/testing';
import { createIncidentActivities } from '../../activities/incidents';
import { createRemediationActivities } from '../../activities/remediation';
import { createTriageActivities } from '../../activities/triage';
import { parseConfig } from '../../domain/config';
import { runbookSpecSchema } from '../../domain/runbook';
import { getIncident, getTimeline, openOrJoin, updateIncident } from '../../store/incidents';
import { createRunbook } from '../../store/runbooks';
import { useMongo } from '../harness/mongo';

/**
 * A new incident's triage in one activity (workflows/incident.ts, patch `one-step-triage`),
 * against the real store: it writes what the four activities it replaces wrote, in their
 * order, once however often it is retried, and nothing for an incident resolved before it began.
 */
describe('triageIncident', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  let triage: ReturnType<typeof createTriageActivities>['triageIncident'];
  beforeAll(async () => {
    mongo = await useMongo();
    const config = parseConfig({});
    triage = createTriageActivities(
      createIncidentActivities({ annotationPrefix: 'foghorn.dev' }),
      createRemediationActivities(config, false),
    ).triageIncident;
    const spec = runbookSpecSchema.parse({
      version: '1.0.0',
      name: 'triage-custom-fix',
      description: 'test runbook',
      category: 'custom',
      automated: true,
      severity: ['low'],
      targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
      steps: [{ type: 'Wait', params: { duration: '1s' } }],
    });
    expect((await createRunbook(spec)).created).toBe(true);
  });
  afterAll(() => mongo?.stop());

  const open = async (resource: string) =>
    (
      await openOrJoin({
        resource,
        namespace: 'shop',
        signalType: 'Custom',
        severity: 'low',
        description: 'test',
        cluster: 'local',
        labels: {},
        detectionSource: 'api',
      })
    ).incident.name;

  it('moves the incident to Analyzing, analyses it, matches its runbook and returns its options', async () => {
    const name = await open('Deployment/checkout');
    const at = new Date().toISOString();
    const options = await new MockActivityEnvironment().run(triage, { name, at });

    expect(options).toMatchObject({
      maxAttempts: expect.any(Number),
      deployment: true,
      llm: false,
      runbooks: [{ name: 'triage-custom-fix', usesKubernetes: false }],
    });
    const incident = await getIncident(name);
    expect(incident).toMatchObject({ state: 'Analyzing', runbook: 'triage-custom-fix' });
    expect(incident?.insight).toMatch(/^AI-/);
    const types = (await getTimeline(name)).map((e) => e.type);
    expect(types).toEqual(['Detection', 'Analysis', 'Analysis', 'RunbookMatch']);

    // A retry (the same activity attempt's keys) writes nothing twice.
    const env = new MockActivityEnvironment();
    await env.run(triage, { name, at });
    await env.run(triage, { name, at });
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(types);
  });

  it('does nothing for an incident resolved before it began', async () => {
    const name = await open('Deployment/payments');
    await updateIncident(name, { state: 'Resolved', resolvedAt: new Date() });

    expect(await new MockActivityEnvironment().run(triage, { name, at: new Date().toISOString() })).toBeNull();
    const incident = await getIncident(name);
    expect(incident?.state).toBe('Resolved');
    expect(incident?.insight).toBeFalsy();
    expect((await getTimeline(name)).map((e) => e.type)).toEqual(['Detection']);
  });
});
