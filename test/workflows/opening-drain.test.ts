import mongoose from 'mongoose';
import type { Activities } from '../../activities';
import { firingAlert } from '../../bench/fixtures';
import { enqueueSignals } from '../../store/signal-inbox';
import { scheduledActivities } from '../harness/history';
import { useStack } from '../harness/stack';

/**
 * A new incident's run looks into its signal inbox in its triage's activity
 * (workflows/incident/triage.ts: `drainAndTriage`), against the real worker, store and time-skipping server: what
 * waited before the run began is recorded by the triage, what is told after the triage's last look is
 * recorded after it, each signal once and with its own index (the looks while a slow analysis
 * runs: test/activities/incident-stages.test.ts).
 */

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON
type Json = any;

let s: Awaited<ReturnType<typeof useStack>>;
/** For the next triage: run before its activity (signals that came before the run), and while it runs. */
let next: { before: (name: string) => Promise<unknown>; during: (name: string) => Promise<unknown> } | undefined;

beforeAll(async () => {
  s = await useStack({
    wrapActivities: (activities: Activities) => ({
      ...activities,
      drainAndTriage: async (input) => {
        const hooks = next;
        next = undefined;
        await hooks?.before(input.name);
        const opened = await activities.drainAndTriage(input);
        await hooks?.during(input.name);
        return opened;
      },
    }),
  });
}, 120_000);

afterAll(() => s?.stop());

const get = async (path: string): Promise<Json> => (await s.call('GET', path, { token: s.tokens.viewer })).body;
const post = (body: object) => s.call('POST', '/alerts/alertmanager', { token: s.tokens.operator, body });
const queued = (name: string) => mongoose.connection.collection('signal_inbox').countDocuments({ incident: name });
const activitiesOf = async (name: string) =>
  scheduledActivities((await s.client.workflow.getHandle(name).fetchHistory()).events ?? []);
/** A duplicate as the inbox holds one the API queued and whose hand-over was lost. */
const lost = (name: string, n: number) =>
  enqueueSignals(
    name,
    Array.from({ length: n }, (_, i) => ({
      signalType: 'CrashLoopBackOff',
      description: `queued before the run ${i}`,
      source: 'alertmanager',
      labels: {},
      at: new Date(),
    })),
  );

describe("a new incident's look into its inbox", () => {
  it('records what waited before its run in the triage, and what came during the triage after it, each once', async () => {
    let told = 0;
    next = {
      before: (name) => lost(name, 2),
      // A duplicate through the API while the triage runs: queued, and the workflow told.
      during: async (name) => {
        const res = await post(firingAlert('opening', 'ledger', 'ledger-1'));
        expect(res.body.items[0]).toMatchObject({ outcome: 'correlated', incident: name });
        await s.eventually(
          async () =>
            ((await s.client.workflow.getHandle(name).fetchHistory()).events ?? []).filter(
              (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'signalsQueued',
            ).length,
          (n) => n > 0,
          30_000,
        );
        told++;
      },
    };
    const opened = await post(firingAlert('opening', 'ledger', 'ledger-0'));
    const name = opened.body.items[0].incident as string;

    const recorded = await s.eventually(
      async () => ({
        count: (await get(`/incidents/${name}`)).status.correlatedSignals as number,
        left: await queued(name),
      }),
      (v) => v.count === 3 && v.left === 0,
      90_000,
    );
    expect(recorded).toEqual({ count: 3, left: 0 });
    expect(told).toBe(1);
    const correlated = ((await get(`/incidents/${name}/timeline`)).events as Json[]).filter(
      (e) => e.type === 'SignalCorrelated',
    );
    expect(correlated).toHaveLength(3);
    expect(new Set(correlated.map((e) => e.details?.index)).size).toBe(3);
    // The two that waited came through the triage: no activity of their own before it.
    const scheduled = await activitiesOf(name);
    expect(scheduled[0]).toBe('drainAndTriage');
    expect(scheduled.filter((a) => a === 'drainSignalInbox')).toHaveLength(1); // the one told during the triage
  });
});
