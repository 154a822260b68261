/**
 * The patches of workflow changes made after the baseline (docs/design.md, "Versioning and
 * upgrades"): each guards a change of commands with `patched()`, so runs started before it
 * replay as they ran. Recorded histories of both sides live in test/replay/histories.
 */

/** A failed plan leaves a template change in place instead of undoing it into the failing template. */
export const NEVER_BACK_INTO_FAILURE = 'foghorn-never-back-into-failure';

/** Verification of a Kubernetes target is decided by its health and the failure's signature, not by signals joining. */
export const VERIFY_BY_HEALTH = 'foghorn-verify-by-health';

/** An incident's remediation has a budget per severity; when it runs out, the ladder starts beside automation. */
export const REMEDIATION_BUDGET = 'foghorn-remediation-budget';
