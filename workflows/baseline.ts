/**
 * The versioning baseline (docs/design.md, "Versioning and upgrades"). Every run of a Foghorn
 * workflow records the baseline's marker in its first workflow task. A history without it began
 * under a release from before the baseline, whose commands this code does not reproduce: its
 * workflow task fails with a message that names the way out, instead of a nondeterminism error
 * half way through, and the run stays as it was until an older worker finishes it or an operator
 * terminates it. Registered for every workflow by the worker (worker/workflow-bundle.ts).
 */
import { patched, workflowInfo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** The baseline's marker: a later baseline gets a new one, and refuses the runs of this one. */
export const BASELINE = 'foghorn-1.0';

export class StartedBeforeBaselineError extends Error {
  constructor(workflowType: string, workflowId: string) {
    super(
      `${workflowType} ${workflowId} was started by a Foghorn release before ${BASELINE} and cannot continue on this worker: ` +
        `let it finish on a worker of that release, or terminate it (temporal workflow terminate --workflow-id ${workflowId}); ` +
        `or, under foghorn dev, start afresh with an empty FOGHORN_DATA_DIR (docs/design.md, "Versioning and upgrades")`,
    );
    this.name = 'StartedBeforeBaselineError';
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      execute(input, next) {
        if (!patched(BASELINE)) {
          const { workflowType, workflowId } = workflowInfo();
          throw new StartedBeforeBaselineError(workflowType, workflowId);
        }
        return next(input);
      },
    },
  ],
});
