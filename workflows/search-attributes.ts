import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Typed search attributes (DESIGN §2, brief §6): the Temporal Web UI lists incident workflows
 * by name, state, severity, namespace and resource, e.g. `FoghornIncidentState = "Remediating"`.
 */
export const INCIDENT = defineSearchAttributeKey('FoghornIncident', SearchAttributeType.KEYWORD);
export const INCIDENT_STATE = defineSearchAttributeKey('FoghornIncidentState', SearchAttributeType.KEYWORD);
export const SEVERITY = defineSearchAttributeKey('FoghornSeverity', SearchAttributeType.KEYWORD);
export const NAMESPACE = defineSearchAttributeKey('FoghornNamespace', SearchAttributeType.KEYWORD);
export const RESOURCE = defineSearchAttributeKey('FoghornResource', SearchAttributeType.KEYWORD);

/** A plan's state, set by the incident workflow it runs in: `FoghornRemediationState = "Executing"`. */
export const REMEDIATION_STATE = defineSearchAttributeKey('FoghornRemediationState', SearchAttributeType.KEYWORD);
/** Set by approval workflows (`APR-…`): `FoghornApprovalStatus = "pending"`. */
export const APPROVAL_STATUS = defineSearchAttributeKey('FoghornApprovalStatus', SearchAttributeType.KEYWORD);
/** Set by escalation ladders (`<incident>-escalation`): `FoghornEscalationState = "L2"`, `acknowledged`, `snoozed`, `held`. */
export const ESCALATION_STATE = defineSearchAttributeKey('FoghornEscalationState', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [
  INCIDENT,
  INCIDENT_STATE,
  SEVERITY,
  NAMESPACE,
  RESOURCE,
  REMEDIATION_STATE,
  APPROVAL_STATUS,
  ESCALATION_STATE,
];
