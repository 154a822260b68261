import { patched } from '@temporalio/workflow';

/**
 * A release of a workflow: its marker stands for `patches` (those made since the release before
 * it) and for every patch before those.
 */
export interface Release {
  name: string;
  patches: readonly string[];
}

/**
 * The patches made before a release, taken as one. A run started on a release records that
 * release's marker once and takes the new path of every patch the release stands for, without a
 * marker of its own: each marker costs the server a history event and an upsert of the
 * TemporalChangeVersion search attribute (a visibility write), and a remediated incident took six
 * (docs/benchmarks.md, "Fourteenth pass"). A run started on an older release asks each later
 * patch with patched(), and a run from before any release asks every patch, as it always did.
 *
 * `releases` newest first. Call it first thing in the workflow: the release's marker belongs to
 * the run's first task, so a run recorded before a newer release replays without its marker.
 */
export function sinceRelease(...releases: Release[]): { started: boolean; has: (patch: string) => boolean } {
  for (const [i, release] of releases.entries()) {
    if (!patched(release.name)) continue;
    const later = new Set(releases.slice(0, i).flatMap((r) => r.patches));
    return { started: true, has: (patch) => !later.has(patch) || patched(patch) };
  }
  return { started: false, has: patched };
}

/** The fourteenth pass's release: every patch of the incident and remediation workflows before it. */
export const RELEASE_14: Release = { name: 'release-14', patches: [] };

/** Incident runs before this change escalated in activities of their own; newer ones in the triage. */
export const ESCALATE_IN_TRIAGE = 'escalate-in-triage';
/** The nineteenth pass's release of the incident workflow. */
export const RELEASE_19: Release = { name: 'release-19', patches: [ESCALATE_IN_TRIAGE] };

/** Incident runs before this change drained their inbox in an activity of its own as they started; newer ones in the triage. */
export const TRIAGE_DRAINS_INBOX = 'triage-drains-inbox';
/** Plans before this change ran HttpRequest steps as activities; newer ones as local activities. */
export const LOCAL_HTTP_STEPS = 'local-http-steps';
/** Incident runs before this change started every plan `Pending`; newer ones `Executing` when that is its first move. */
export const PLAN_STARTS_EXECUTING = 'plan-starts-executing';
/** The twenty-fourth pass's release of the incident and remediation workflows. */
export const RELEASE_24: Release = {
  name: 'release-24',
  patches: [TRIAGE_DRAINS_INBOX, LOCAL_HTTP_STEPS, PLAN_STARTS_EXECUTING],
};

/** Incident runs before this change signalled a plan at once, even before it had started; newer ones tell it once started. */
export const TELL_STARTED_PLAN = 'tell-started-plan';
/** The twenty-fifth pass's release of the incident workflow. */
export const RELEASE_25: Release = { name: 'release-25', patches: [TELL_STARTED_PLAN] };

/** Plans before this change wrote `Executing` themselves; newer ones whose record was made `Executing` do not. */
export const PLAN_MADE_EXECUTING = 'plan-made-executing';
/** Plans before this change wrote `Verifying` in a local activity of its own; newer ones with their last step's record. */
export const VERIFYING_WITH_LAST_STEP = 'verifying-with-last-step';
/** Incident runs before this change said `Analyzing` in their first task; newer ones started with it in their search attributes do not. */
export const STARTED_ANALYZING = 'started-analyzing';
/** The twenty-eighth pass's release of the incident and remediation workflows. */
export const RELEASE_28: Release = {
  name: 'release-28',
  patches: [PLAN_MADE_EXECUTING, VERIFYING_WITH_LAST_STEP, STARTED_ANALYZING],
};

/** Incident runs before this change wrote a resolve they decided themselves in an activity of its own; newer ones in their close. */
export const RESOLVE_IN_CLOSE = 'resolve-in-close';
/** The thirtieth pass's release of the incident workflow. */
export const RELEASE_30: Release = { name: 'release-30', patches: [RESOLVE_IN_CLOSE] };

/** Incident runs before this change ran each plan as a child workflow; newer ones in their own run. */
export const PLAN_IN_RUN = 'plan-in-run';
/** The thirty-third pass's release of the incident workflow. */
export const RELEASE_32: Release = { name: 'release-32', patches: [PLAN_IN_RUN] };

/**
 * Plans in their incident's run before this change kept their records through local activities;
 * newer ones through activities, a step's record written while the plan goes on. A local
 * activity's result is a marker in the history, and the SDK can hand it to the workflow in a
 * later activation than the one whose task recorded the marker: replayed, the plan's next
 * commands then come before those of the incident's handlers (a drain of the inbox, say) where
 * they came after, a nondeterminism error that stops the incident for good (docs/benchmarks.md,
 * "Thirty-fifth pass"). An activity's completion is an event where the workflow saw it.
 */
export const PLAN_RECORDS_AS_ACTIVITIES = 'plan-records-as-activities';
/** The thirty-fifth pass's release of the incident workflow. */
export const RELEASE_35: Release = { name: 'release-35', patches: [PLAN_RECORDS_AS_ACTIVITIES] };
