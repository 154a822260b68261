/** The workflows the worker bundles. */
export { incidentWorkflow } from './incident';
export { chatWorkflow } from './chat';
export { agentTurnWorkflow } from './agent-turn';
export { reconcilerWorkflow } from './reconciler';
export { clusterWatchWorkflow } from './cluster-watch';
export { clusterHealthWorkflow } from './cluster-health';
export { approvalWorkflow } from './approval';
export { escalationWorkflow } from './escalation';
export { auditExportWorkflow } from './audit-export';
