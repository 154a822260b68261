import type { IncidentEvidence } from '../evidence';
import type { ActionType } from '../runbook';
import type { Severity, SignalType } from '../vocabulary';

export const RULES_PROVIDER = { provider: 'builtin', model: 'rules-v1' } as const;

export interface AnalysisContext {
  incident: {
    name: string;
    namespace: string;
    resource: string; // <Kind>/<name>
    signalType: SignalType;
    severity: Severity | undefined;
    description: string;
    labels: Record<string, string>;
    detectedAt: Date;
    riskScore: number;
    /** Signals that joined the incident after the first one. */
    correlatedSignals: { signalType: SignalType; description: string; at: Date }[];
  };
  /** Other open incidents in the same namespace within CORRELATION_WINDOW_MS (the caller selects them). */
  related: { name: string; resource: string; signalType: SignalType; state: string; detectedAt: Date }[];
  /** Candidate runbooks for the incident's category (the caller selects them). */
  runbooks: { name: string; category: string; description: string }[];
  /** What was collected from the cluster and the change record (activities/evidence.ts). */
  evidence?: IncidentEvidence;
  /** Why there is no evidence (an unregistered cluster, a kind without any). */
  evidenceGap?: string;
}

export interface SuggestedAction {
  name: string;
  action: ActionType;
  description: string;
  params: Record<string, unknown>;
}

export interface Insight {
  analysis: string;
  /** In [0, 1]. */
  confidence: number;
  recommendations: string[];
  suggestedActions: SuggestedAction[];
  logAnalysis: string;
  gitOpsContext: string;
  cascadeAnalysis: string;
  blastRadiusPrediction: string;
  rootCause: string;
  /** The first recommendation, or '' when there is none. */
  recommendation: string;
  relatedEvents: string[];
}
