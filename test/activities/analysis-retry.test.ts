import { MockActivityEnvironment } from '@temporalio/testing';
import { categoryRunbooks, createIncidentSteps } from '../../activities/incidents';
import { getIncident, getTimeline, openOrJoin } from '../../store/incidents';
import { InsightModel } from '../../store/models';
import { useMongo } from '../harness/mongo';

/**
 * The triage's analysis step against the real store, in an activity retried after a crash that
 * came between storing the insight and writing what follows it: the retry must finish those
 * writes, not skip them.
 */
describe('the analysis retried after the insight was stored', () => {
  const steps = createIncidentSteps({ annotationPrefix: 'foghorn.dev' });
  /** The analysis as the triage activity runs it: the incident as read, its category's runbooks. */
  const analyzeIncident = async (input: { name: string }) => {
    const incident = (await getIncident(input.name))!;
    return (await steps.analyze(incident, await categoryRunbooks(incident), new AbortController().signal)).result;
  };
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  /** A new OOMKilled incident of `Deployment/<deployment>` in `shop`. */
  const open = async (deployment: string) =>
    (
      await openOrJoin({
        resource: `Deployment/${deployment}`,
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'high',
        description: 'OOMKilled',
        cluster: 'local',
        labels: {},
        detectionSource: 'api',
      })
    ).incident;
  /** An insight of the incident, stored as an analysis would have (the rules analyzer's). */
  const storeInsight = (incident: string, name: string, rootCause: string, extra: { fallbackReason?: string } = {}) => {
    const generatedAt = new Date('2026-11-23T10:00:00Z');
    return InsightModel.create({
      name,
      namespace: 'shop',
      issueRef: incident,
      provider: 'builtin',
      model: 'rules-v1',
      rootCause,
      confidence: 0.8,
      recommendation: 'raise the memory limit',
      ...extra,
      generatedAt,
      creationTimestamp: generatedAt,
    });
  };

  it('writes the analysis result and the closing Analysis event from the stored insight', async () => {
    const incident = await open('api');
    // What the first attempt left: the insight, and nothing after it.
    await storeInsight(incident.name, 'AI-20261123-777', 'api exceeds its memory limit', {
      fallbackReason: 'model overloaded',
    });

    // The retry is the activity's second attempt: only a retry looks for a stored insight.
    const retry = () => new MockActivityEnvironment({ attempt: 2 });
    const result = await retry().run(analyzeIncident, { name: incident.name });

    expect(result).toEqual({ insight: 'AI-20261123-777', provider: 'builtin', model: 'rules-v1' });
    expect(await getIncident(incident.name)).toMatchObject({
      insight: 'AI-20261123-777',
      analysisResult: {
        rootCause: 'api exceeds its memory limit',
        recommendation: 'raise the memory limit',
        confidence: 0.8,
      },
    });
    const done = (await getTimeline(incident.name)).filter((e) => e.type === 'Analysis');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      message: 'LLM analysis failed (model overloaded); fell back to the built-in rules analyzer',
      details: { insight: 'AI-20261123-777', fallback: true },
    });
    // Once more (another retry): nothing is written twice.
    await retry().run(analyzeIncident, { name: incident.name });
    expect((await getTimeline(incident.name)).filter((e) => e.type === 'Analysis')).toHaveLength(1);
  });

  it('a first attempt does not look for one, and keeps the insight it finds stored when it writes its own', async () => {
    const incident = await open('web');
    // Stored by a run that raced this one (a reset workflow): the first attempt analyses anyway.
    await storeInsight(incident.name, 'AI-20261123-778', 'web exceeds its memory limit');
    // Its own run: timeline keys are the activity's (the test above has the default ids).
    const first = new MockActivityEnvironment({ workflowExecution: { workflowId: incident.name, runId: 'run-2' } });
    const result = await first.run(analyzeIncident, { name: incident.name });
    expect(result).toMatchObject({ insight: 'AI-20261123-778' });
    expect(await InsightModel.countDocuments({ issueRef: incident.name })).toBe(1);
    expect((await getIncident(incident.name))?.analysisResult?.rootCause).toBe('web exceeds its memory limit');
    expect((await getTimeline(incident.name)).map((e) => e.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Analysis started/),
        'Analysis complete: web exceeds its memory limit',
      ]),
    );
  });
});
