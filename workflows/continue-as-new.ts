import { workflowInfo } from '@temporalio/workflow';
import { hashFraction } from '../domain/hash-fraction';

/** How far past the server's suggestion a run may go on, as a fraction of the history it had then. */
export const SPREAD = 0.5;

/**
 * "Time to continue as new", spread out. The server suggests it at the same history length for
 * every run, so a storm's incidents — opened in the same minutes and fed the same duplicates —
 * would all continue together, and the worker would build hundreds of new runs at once (a burst
 * of memory and CPU). Each run goes on past the suggestion by a fraction of the history it had
 * then (0 to {@link SPREAD}), fixed by its workflow id, so the same storm's runs continue over
 * several minutes. Deterministic: the fraction comes from the id, the length from the activation.
 */
export function continueAsNewDue(): () => boolean {
  const extra = hashFraction(workflowInfo().workflowId) * SPREAD;
  let suggestedAt: number | undefined;
  return () => {
    const { continueAsNewSuggested, historyLength } = workflowInfo();
    if (!continueAsNewSuggested) return false;
    suggestedAt ??= historyLength;
    return historyLength >= suggestedAt * (1 + extra);
  };
}
