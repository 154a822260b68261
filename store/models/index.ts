/** Importing this registers every model, so connectMongo can create all indexes up front. */
export * from './counter';
export * from './token';
export * from './audit-record';
export * from './audit-checkpoint';
export * from './runbook';
export * from './incident';
export * from './insight';
export * from './postmortem';
export * from './chat-message';
export * from './callback-delivery';
export * from './reconciler-stat';
export * from './cluster';
export * from './cluster-secret';
export * from './remediation-plan';
export * from './approval';
export * from './step-run';
export * from './notification-delivery';
