import type { Change, ChangeAuthor, RevisionHealth } from './changes';

/**
 * Evidence for a workload incident: what the analysis collected from the cluster and the change
 * record before it concluded (activities/evidence.ts collects, domain/evidence-rank.ts ranks).
 * The rules analyzer and the LLM get the same evidence; each recommendation cites the items it
 * rests on by id (`E1`, `E2`, …). Bounded: it is stored with the insight and read by workflows.
 */

export const EVIDENCE_KINDS = ['change', 'revision', 'termination', 'logs', 'events', 'node', 'replicas'] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** One citable fact. */
export interface EvidenceItem {
  id: string;
  kind: EvidenceKind;
  summary: string;
  at?: Date;
}

/** The change the evidence points at, with how sure and why. */
export interface SuspectedChange {
  change: string;
  resource: string;
  type: Change['type'];
  revision?: number;
  previousRevision?: number;
  summary: string;
  /** When the change reached the cluster. */
  at: Date;
  /** How long before the first failure it reached the cluster (ms). */
  leadMs: number;
  /** In [0, 1]. */
  confidence: number;
  /** Why this confidence, in a sentence. */
  reason: string;
  by: ChangeAuthor;
  evidence: string;
}

export interface PodEvidence {
  name: string;
  node: string;
  phase: string;
  restarts: number;
  waitingReason: string;
  lastTermination?: { reason: string; exitCode: number; at?: Date };
  /** Tails, redacted and capped; [] when the API server serves none (the reason is in `notes`). */
  previousLogs: string[];
  currentLogs: string[];
}

export interface IncidentEvidence {
  collectedAt: Date;
  /** The first failure the window is measured from. */
  firstSignalAt: Date;
  windowMs: number;
  /** Pod → ReplicaSet → Deployment. */
  ownerChain: string[];
  /** Changes in the window, most likely first (at most a handful). */
  changes: Change[];
  suspect?: SuspectedChange;
  revisions: RevisionHealth[];
  pods: PodEvidence[];
  events: { object: string; reason: string; message: string; count: number; at?: Date }[];
  nodes: { name: string; ready: string; conditions: string[] }[];
  replicas?: { desired: number; available: number; updated: number };
  /** The citable facts, in the order the analysis uses them. */
  items: EvidenceItem[];
  /** What could not be collected and why (timeouts, 403, no logs served). */
  notes: string[];
}
