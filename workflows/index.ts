/** The workflows the worker bundles. */
export { incidentWorkflow } from './incident';
export { postmortemWorkflow } from './postmortem';
