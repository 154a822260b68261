import { parseDuration } from './duration';
import type { MaintenanceWindow, OnCallSchedule } from './escalation-policy';

/**
 * Who is on call, and whether a maintenance window holds the ladder (DESIGN §8, issue 11).
 * Time ranges include their start and exclude their end, so back-to-back shifts and windows
 * never overlap.
 */

export interface OnCallShift {
  schedule: string;
  person: string;
  /** ISO bounds of the shift (or of the override). */
  since: string;
  until: string;
  override: boolean;
}

const covers = (from: string, to: string, at: number) => Date.parse(from) <= at && at < Date.parse(to);

/** The person on call at `at`: an override covering `at` wins (the latest-starting one when several), else the rotation. */
export function onCallAt(schedule: OnCallSchedule, at: Date): OnCallShift {
  const t = at.getTime();
  // Ties go to the override listed last: the later entry is the later decision.
  const override = schedule.overrides
    .filter((o) => covers(o.from, o.to, t))
    .reduce<(typeof schedule.overrides)[number] | undefined>(
      (best, o) => (!best || Date.parse(o.from) >= Date.parse(best.from) ? o : best),
      undefined,
    );
  if (override)
    return {
      schedule: schedule.name,
      person: override.person,
      since: new Date(override.from).toISOString(),
      until: new Date(override.to).toISOString(),
      override: true,
    };

  // Shifts follow back to back from `start`, forwards and backwards alike.
  const start = Date.parse(schedule.start);
  const shift = parseDuration(schedule.shift);
  const index = Math.floor((t - start) / shift);
  const people = schedule.people.length;
  const since = start + index * shift;
  return {
    schedule: schedule.name,
    person: schedule.people[((index % people) + people) % people]!.name,
    since: new Date(since).toISOString(),
    until: new Date(since + shift).toISOString(),
    override: false,
  };
}

/** The maintenance window holding `namespace` at `at` (`*` matches every namespace); the one ending last when several. */
export function activeMaintenance(
  windows: readonly MaintenanceWindow[],
  namespace: string,
  at: Date,
): MaintenanceWindow | undefined {
  const t = at.getTime();
  return windows
    .filter((w) => (w.namespace === '*' || w.namespace === namespace) && covers(w.from, w.to, t))
    .reduce<MaintenanceWindow | undefined>(
      (last, w) => (!last || Date.parse(w.to) > Date.parse(last.to) ? w : last),
      undefined,
    );
}
