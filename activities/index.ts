import type { Config } from '../domain/config';
import { recordAudit } from './audit';
import { createIncidentActivities } from './incidents';
import { createPostmortemActivities } from './postmortem';

/** Every activity the worker registers, wired to the configuration; workflows import only types. */
export function createActivities(config: Config) {
  return {
    recordAudit,
    ...createIncidentActivities({
      annotationPrefix: config.FOGHORN_ANNOTATION_PREFIX,
      ...(config.FOGHORN_LLM_BASE_URL && {
        llm: {
          baseUrl: config.FOGHORN_LLM_BASE_URL,
          apiKey: config.FOGHORN_LLM_API_KEY ?? '',
          model: config.FOGHORN_LLM_MODEL,
        },
      }),
    }),
    ...createPostmortemActivities(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
