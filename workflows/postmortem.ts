import { proxyActivities } from '@temporalio/workflow';
import type { PostmortemActivities } from '../activities/postmortem';
import { STORE_CALL_OPTIONS } from './store-options';

/**
 * Generation reads and writes a handful of documents: retry it patiently until the store answers.
 * Also the incident workflow's own call since the patch `postmortem-in-run`.
 */
export const { generatePostmortem } = proxyActivities<PostmortemActivities>({
  ...STORE_CALL_OPTIONS,
  startToCloseTimeout: '1m',
});

/**
 * Writes the postmortem of a resolved incident (DESIGN §9); started as a child with workflow id
 * `<incident>-postmortem` by incident runs from before the patch `postmortem-in-run` (later runs
 * call the activity themselves). Returns the postmortem's name.
 */
export async function postmortemWorkflow(input: { incident: string }): Promise<string> {
  return generatePostmortem({ incident: input.incident });
}
