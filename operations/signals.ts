import type { Signal } from '../domain/incident';
import { resourceKey } from '../domain/incident';
import { findOpenIncident } from '../store/incidents';
import { SYSTEM_ACTOR } from '../domain/incident-requests';
import { ingestSignal, resolveIncident, SOURCE_RESOLUTION, type IncidentOps } from './incidents';

/** What one source signal did: nothing a source reports is dropped silently. */
export type SignalOutcome =
  | { outcome: 'opened' | 'correlated'; incident: string }
  | { outcome: 'resolved' | 'kept-escalated' | 'already-resolved'; incident: string }
  | { outcome: 'no-open-incident' };

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
  if (status === 'firing') {
    const { created, incident } = await ingestSignal(ops, signal);
    return { outcome: created ? 'opened' : 'correlated', incident: incident.name };
  }
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
