import { patched } from '@temporalio/workflow';

/**
 * The patches made before `release`, taken as one. A run started on `release` or later records
 * the release's marker once and takes every earlier patch's new path without a marker of its own:
 * each marker costs the server a history event and an upsert of the TemporalChangeVersion search
 * attribute (a visibility write), and a remediated incident took six (docs/benchmarks.md,
 * "Fourteenth pass"). A run from before the release has no release marker and asks each patch as
 * it always did. Patches made after the release are asked with patched() as usual.
 *
 * Call it first thing in the workflow: the release's marker belongs to the run's first task.
 */
export function sinceRelease(release: string): { started: boolean; has: (patch: string) => boolean } {
  const started = patched(release);
  return { started, has: (patch) => started || patched(patch) };
}

/** This pass's release: every patch of the incident and remediation workflows before it. */
export const RELEASE_14 = 'release-14';
