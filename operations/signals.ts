import type { Signal } from '../domain/incident';
import { resourceKey } from '../domain/incident';
import { findOpenIncident } from '../store/incidents';
import { SYSTEM_ACTOR } from '../domain/incident-requests';
import { ingestSignals, resolveIncident, SOURCE_RESOLUTION, type IncidentOps } from './incidents';

/** What one source signal did: nothing a source reports is dropped silently. */
export type SignalOutcome =
  | { outcome: 'opened' | 'correlated'; incident: string }
  | { outcome: 'resolved' | 'kept-escalated' | 'already-resolved'; incident: string }
  | { outcome: 'no-open-incident' };

export interface SourceSignal {
  signal: Signal;
  status: 'firing' | 'resolved';
}

/** Resources whose signals are applied at once by one delivery (each resource's in order). */
const RESOURCES_AT_ONCE = 8;

/**
 * One signal from a source (Alertmanager, the Kubernetes watcher): a firing one opens or joins
 * the resource's incident; a resolved one resolves its open incident at source, except an
 * `Escalated` one, which gets a timeline event and waits for a human (DESIGN §6).
 */
export async function applySignal(
  ops: IncidentOps,
  signal: Signal,
  status: 'firing' | 'resolved',
): Promise<SignalOutcome> {
  return (await applyResourceSignals(ops, [{ signal, status }]))[0];
}

/**
 * A delivery of many signals (an Alertmanager group), in bulk: the signals of one resource are
 * applied in order (a payload that fires and then resolves a resource ends resolved), a run of
 * firing ones in one ingest (one insert for all its duplicates); different resources at once,
 * RESOURCES_AT_ONCE at a time. Outcomes come back in the order of `signals`. The first failure
 * fails the delivery (the sender retries it whole; what was applied is deduplicated then).
 */
export async function applySignals(ops: IncidentOps, signals: SourceSignal[]): Promise<SignalOutcome[]> {
  const byResource = new Map<string, number[]>();
  signals.forEach((s, i) => {
    const key = resourceKey(s.signal);
    byResource.set(key, [...(byResource.get(key) ?? []), i]);
  });
  const outcomes: SignalOutcome[] = new Array(signals.length);
  const groups = [...byResource.values()];
  const next = async (): Promise<void> => {
    for (let group = groups.shift(); group; group = groups.shift()) {
      const applied = await applyResourceSignals(
        ops,
        group.map((i) => signals[i]),
      );
      group.forEach((i, j) => (outcomes[i] = applied[j]));
    }
  };
  await Promise.all(Array.from({ length: Math.min(RESOURCES_AT_ONCE, groups.length) }, next));
  return outcomes;
}

/** Signals of one resource, in order: each run of firing ones ingested together. */
async function applyResourceSignals(ops: IncidentOps, signals: SourceSignal[]): Promise<SignalOutcome[]> {
  const outcomes: SignalOutcome[] = [];
  for (let i = 0; i < signals.length;) {
    if (signals[i].status === 'resolved') {
      outcomes.push(await resolveAtSource(ops, signals[i].signal));
      i++;
      continue;
    }
    let end = i;
    while (end < signals.length && signals[end].status === 'firing') end++;
    const ingested = await ingestSignals(
      ops,
      signals.slice(i, end).map((s) => s.signal),
    );
    for (const { created, incident } of ingested)
      outcomes.push({ outcome: created ? 'opened' : 'correlated', incident: incident.name });
    i = end;
  }
  return outcomes;
}

async function resolveAtSource(ops: IncidentOps, signal: Signal): Promise<SignalOutcome> {
  const incident = await findOpenIncident(resourceKey(signal));
  if (!incident) return { outcome: 'no-open-incident' };
  try {
    const { resolved } = await resolveIncident(ops, incident, {
      resolution: SOURCE_RESOLUTION,
      actor: SYSTEM_ACTOR,
      atSource: true,
    });
    return { outcome: resolved ? 'resolved' : 'kept-escalated', incident: incident.name };
  } catch (err) {
    if ((err as { status?: number }).status !== 409) throw err;
    return { outcome: 'already-resolved', incident: incident.name };
  }
}
