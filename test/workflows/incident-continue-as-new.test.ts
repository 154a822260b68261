import { firingAlert } from '../../bench/fixtures';
import { hashFraction } from '../../domain/hash-fraction';
import { SPREAD } from '../../workflows/continue-as-new';
import { useStack } from '../harness/stack';

/**
 * An open incident keeps its history bounded: when the server suggests it, the run continues as
 * new with its state, and every signal still counts once. Runs do not all continue at the
 * suggestion: each goes on by a fraction of its history fixed by its workflow id (docs/decisions.md,
 * "Incidents and ingestion"), so a storm's incidents continue over minutes rather than together. On the dev server
 * (the test server never suggests continuing), told to suggest it at a small history.
 */
const SUGGEST_AT = 150;

describe('incident workflow: continue-as-new, spread', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  beforeAll(async () => {
    s = await useStack({ continueAsNewAt: SUGGEST_AT });
  }, 120_000);
  afterAll(() => s?.stop());

  const get = (path: string) => s.call('GET', path, { token: s.tokens.viewer });
  const post = (deployment: string, n: number) =>
    s.call('POST', '/alerts/alertmanager', {
      token: s.tokens.operator,
      body: firingAlert('spread', deployment, `${deployment}-${n}`),
    });
  const runOf = async (name: string) => (await s.client.workflow.getHandle(name).describe()).runId;

  it('continues each open incident past the suggestion by its own fraction, state and signals kept', async () => {
    const deployments = ['spread-a', 'spread-b'];
    const names: string[] = [];
    for (const d of deployments) names.push((await post(d, 0)).body.items[0].incident as string);
    for (const name of names)
      await s.eventually(
        () => get(`/incidents/${name}`),
        (r) => r.body.status.state === 'Escalated',
        60_000,
      );
    const firstRuns = await Promise.all(names.map(runOf));

    // Duplicates until both runs have continued as new (each hand-over adds events to the history).
    let sent = 1;
    const deadline = Date.now() + 150_000;
    for (;;) {
      const runs = await Promise.all(names.map(runOf));
      if (runs.every((run, i) => run !== firstRuns[i])) break;
      if (Date.now() > deadline) throw new Error(`not continued as new: ${names.join(', ')}`);
      const answers = await Promise.all(deployments.map((d) => post(d, sent)));
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
      sent++;
      await new Promise((r) => setTimeout(r, 250));
    }

    for (const [i, name] of names.entries()) {
      const events = (await s.client.workflow.getHandle(name, firstRuns[i]).fetchHistory()).events ?? [];
      const last = events[events.length - 1];
      expect(last.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      // Not at the suggestion: past it by this id's fraction, and within the spread's bound.
      const extra = hashFraction(name) * SPREAD;
      expect(events.length).toBeGreaterThanOrEqual(SUGGEST_AT * (1 + extra));
      expect(events.length).toBeLessThanOrEqual(SUGGEST_AT * (1 + SPREAD) + 60);
    }

    // The new runs carry on: still escalated, and every duplicate sent (all but the opening
    // alert) counted exactly once, across the runs.
    for (const name of names)
      await s.eventually(
        () => get(`/incidents/${name}`),
        (r) => r.body.status.state === 'Escalated' && r.body.status.correlatedSignals === sent - 1,
        60_000,
      );
  }, 300_000);
});
