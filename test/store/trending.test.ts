import { signalSchema } from '../../contracts/incidents';
import { RELATED_POSTMORTEMS } from '../../domain/postmortem';
import { clearDedupEntry, openOrJoin, setPostmortemRef, updateIncident } from '../../store/incidents';
import { trendingIncidents } from '../../store/postmortems';
import { useMongo } from '../harness/mongo';

/**
 * A postmortem's trending block counts the earlier incidents in its window and names the
 * postmortems of only the most recent few: a storm's report does not list thousands (issue 14).
 */
describe('trending incidents before a postmortem', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo.stop());

  const MINUTE = 60_000;
  const DAY = 24 * 60 * MINUTE;
  const detected = new Date('2026-03-31T12:00:00Z');
  /** Opens an incident, resolves it (so its resource can open another) and names its postmortem. */
  const past = async (resource: string, signalType: string, at: Date, postmortem = '') => {
    const signal = signalSchema.parse({
      signalType,
      severity: 'high',
      namespace: 'shop',
      resource,
      detectionSource: 'alertmanager',
    });
    const { incident } = await openOrJoin(signal, at);
    await updateIncident(incident.name, { state: 'Resolved', resolvedAt: at });
    await clearDedupEntry(incident);
    if (postmortem) await setPostmortemRef(incident.name, postmortem);
    return incident;
  };

  it('counts every earlier incident in the window and names the most recent postmortems, oldest first', async () => {
    // On the same resource: three in the window, one older than it.
    await past('Deployment/cart', 'OOMKilled', new Date(detected.getTime() - 31 * DAY), 'PM-OLD');
    for (let i = 1; i <= 3; i++)
      await past('Deployment/cart', 'HighMemory', new Date(detected.getTime() - i * DAY), `PM-R${i}`);
    // The same category elsewhere: twelve, two without a postmortem; another category does not count.
    for (let i = 1; i <= 12; i++)
      await past(
        `Deployment/o${i}`,
        'OOMKilled',
        new Date(detected.getTime() - i * 60 * MINUTE),
        i % 5 === 0 ? '' : `PM-O${i}`,
      );
    await past('Deployment/crash', 'CrashLoopBackOff', new Date(detected.getTime() - MINUTE), 'PM-CRASH');
    const subject = await past('Deployment/cart', 'OOMKilled', detected);
    await past('Deployment/o1', 'OOMKilled', new Date(detected.getTime() + MINUTE), 'PM-LATER');

    const trending = await trendingIncidents(subject, 30);
    expect(trending.onResource).toBe(3);
    expect(trending.elsewhere).toBe(12);
    // Newest first: o1..o12 (hours before), minus o5 and o10, then R1 (a day before): ten.
    const newest = ['PM-O1', 'PM-O2', 'PM-O3', 'PM-O4', 'PM-O6', 'PM-O7', 'PM-O8', 'PM-O9', 'PM-O11', 'PM-O12'];
    expect(newest).toHaveLength(RELATED_POSTMORTEMS);
    expect(trending.postmortems).toEqual([...newest].reverse());
  });
});
