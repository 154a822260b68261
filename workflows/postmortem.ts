import type { PostmortemActivities } from '../activities/postmortem';
import { storeCalls } from './store-calls';

/**
 * Writes the postmortem of a resolved incident (DESIGN §9); started as a child with workflow id
 * `<incident>-postmortem` by incident runs from before the patch `postmortem-in-run` (later runs
 * make the same call themselves). Returns the postmortem's name. Generation reads and writes a
 * handful of documents (a minute per try): retried until the store answers.
 */
export async function postmortemWorkflow(input: { incident: string }): Promise<string> {
  const { generatePostmortem } = storeCalls<PostmortemActivities>({ startToCloseTimeout: '1m' });
  return generatePostmortem({ incident: input.incident });
}
