import type { Client } from '@temporalio/client';
import type { Config } from '../config/env';
import { createAgentLlmActivities } from './agent-llm';
import { createAgentToolActivities } from './agent-tools';
import { createAgenticActivities } from './agentic';
import { createApprovalActivities } from './approvals';
import { recordAudit } from './audit';
import { createAuditExportActivities } from './audit-export';
import { createCallbackActivities } from './callbacks';
import { createChatActivities } from './chat';
import { createClusterHealthActivities } from './cluster-health';
import { createIncidentActivities, createIncidentSteps } from './incidents';
import { createIncidentStageActivities } from './incident-stages';
import { createKubeActionActivities } from './kube-actions';
import { createKubePreviewActivities } from './kube-preview';
import { createKubeReadActivities } from './kube-reads';
import type { LlmConfig } from './llm';
import { createMediaActivities } from './media';
import { createNotificationSteps } from './notifications';
import { createPostmortemActivities } from './postmortem';
import { createKubeWatchActivities } from './kube-watch';
import { createReconcileActivities } from './reconcile';
import { createRemediationActivities, createRemediationSteps } from './remediation';
import { createRemediationVerifyActivities } from './remediation-verify';
import { createTranscriptionActivities } from './transcribe';

export interface ActivityDeps {
  config: Config;
  /** For activities that act through Temporal (the chat agent's incident tools). */
  client: Client;
  taskQueue: string;
}

/** Every activity the worker registers, wired to the configuration; workflows import only types. */
export function createActivities({ config, client, taskQueue }: ActivityDeps) {
  const llm: LlmConfig | undefined = config.FOGHORN_LLM_BASE_URL
    ? {
        baseUrl: config.FOGHORN_LLM_BASE_URL,
        apiKey: config.FOGHORN_LLM_API_KEY ?? '',
        model: config.FOGHORN_LLM_MODEL,
      }
    : undefined;
  const incidentDeps = { annotationPrefix: config.FOGHORN_ANNOTATION_PREFIX, ...(llm && { llm }) };
  const postmortems = createPostmortemActivities();
  const notifications = createNotificationSteps(config);
  return {
    recordAudit,
    ...createAuditExportActivities(),
    ...createIncidentActivities(incidentDeps),
    ...createIncidentStageActivities(
      createIncidentSteps(incidentDeps),
      createRemediationSteps(config, llm !== undefined),
      postmortems,
      notifications.escalation,
    ),
    ...postmortems,
    ...createClusterHealthActivities(),
    ...createChatActivities(config),
    ...createCallbackActivities(config),
    ...createMediaActivities(config),
    ...createTranscriptionActivities(config),
    ...createAgentToolActivities({ config, client, taskQueue }),
    ...createAgentLlmActivities(llm),
    ...createReconcileActivities({ client, taskQueue, graceMs: config.FOGHORN_RECONCILE_GRACE }),
    ...createRemediationActivities(config, llm !== undefined),
    ...createRemediationVerifyActivities(),
    ...createAgenticActivities(llm),
    ...createApprovalActivities(),
    ...notifications.activities,
    ...createKubeActionActivities(),
    ...createKubeReadActivities(),
    ...createKubePreviewActivities(),
    ...createKubeWatchActivities({ config, client, taskQueue }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
