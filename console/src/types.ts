/** The API's answers, as far as the console reads them (api/views.ts and api/routes/*.ts are the truth). */
export interface List<T> {
  kind: string;
  metadata: { totalCount: number; page: number; pageSize: number };
  items: T[];
}

export interface IncidentItem {
  name: string;
  namespace: string;
  severity: string;
  state: string;
  resource: string;
  description: string;
  riskScore: number;
  detectedAt: string;
  resolvedAt?: string;
  age: string;
  assignedTo?: string;
}

export interface Incident {
  metadata: { name: string; namespace: string; createdAt: string; labels: Record<string, string> };
  spec: {
    resource: string;
    severity: string;
    description: string;
    detectionSource: string;
    runbook: string;
    escalationPolicy: string;
    signalType: string;
    cluster: string;
  };
  status: {
    state: string;
    riskScore: number;
    analysisResult: { rootCause: string; recommendation: string; confidence: number; relatedEvents: string[] };
    acknowledged: boolean;
    assignedTo: string;
    detectedAt: string;
    lastUpdated: string;
    timelineCount: number;
    remediationAttempts: number;
    activePlan?: { name: string; state: string; strategy: string; attempt: number };
    snoozed?: boolean;
    snoozeUntil?: string;
    escalatedAt?: string;
    resolvedAt?: string;
    resolution?: string;
    insight?: string;
    postmortem?: string;
  };
}

export interface TimelineEvent {
  timestamp: string;
  type: string;
  source: string;
  message: string;
  severity?: string;
  details?: Record<string, unknown>;
}

export interface Insight {
  name: string;
  issueRef: string;
  provider: string;
  model: string;
  analysis: string;
  confidence: number;
  recommendations: string[];
  suggestedActions: { name: string; action: string; description: string }[];
  generatedAt: string;
}

export interface PlanAction {
  type: string;
  params: Record<string, unknown>;
  description?: string;
  outcome?: string;
  result?: string;
}

export interface Plan {
  name: string;
  namespace: string;
  issueRef: string;
  attempt: number;
  strategy: string;
  state: string;
  startedAt?: string;
  completedAt?: string;
  result: string;
  agenticMode: boolean;
  actions: PlanAction[];
  creationTimestamp: string;
  runbook: string;
  riskScore: number;
  approvalRequired: boolean;
  approvalReasons: string[];
  approval: string;
  cluster: string;
}

export interface Approval {
  name: string;
  namespace: string;
  status: string;
  incident: string;
  action: string;
  riskScore: number;
  requiredRole: 'viewer' | 'operator' | 'admin';
  runbook: string;
  requestedAt: string;
  expiresAt?: string;
  decidedAt?: string;
  decidedBy?: string;
  plan: string;
  reasons: string[];
  comment?: string;
  expiryReason?: string;
  previews?: {
    step: number;
    action: string;
    target: string;
    summary: string;
    diff: string;
    dryRun: boolean;
    error?: string;
  }[];
}

export interface RunbookStep {
  type: string;
  params: Record<string, unknown>;
  description?: string;
}

export interface RunbookSpec {
  category: string;
  description: string;
  version: string;
  automated: boolean;
  approvalRequired: boolean;
  severity: string[];
  targets: { signalTypes: string[]; resourceKinds: string[] };
  steps: RunbookStep[];
  maxAttempts: number;
  verificationWindow?: string;
}

export interface RunbookItem extends RunbookSpec {
  name: string;
  stepsCount: number;
  /** null before the runbook's first run. */
  successRate: number | null;
  avgExecutionTime: string | null;
  lastUsed?: string;
}

export interface Runbook {
  metadata: { name: string; createdAt: string; updatedAt: string };
  spec: RunbookSpec;
  status: {
    stepsCount: number;
    avgExecutionTime: string | null;
    successRate: number | null;
    lastUsed?: string;
    executions: number;
  };
}

export interface PostmortemItem {
  name: string;
  namespace: string;
  incident: string;
  state: string;
  title: string;
  severity: string;
  author: string;
  createdAt: string;
  reviewedBy?: string;
}

export interface Postmortem {
  metadata: {
    name: string;
    namespace: string;
    incident: string;
    createdAt: string;
    author: string;
    reviewedBy: string;
  };
  status: { state: string; reviewer?: string; reviewStartedAt?: string; closedAt?: string; notes?: string };
  report: {
    title: string;
    severity: string;
    duration: string;
    detectedAt: string;
    resolvedAt: string;
    summary: string;
    rootCause: { description: string; category: string; confidence: number };
    timeline: { time: string; event: string }[];
    remediationApplied: { runbook: string; steps: string[]; result: string };
    actionItems: { priority: string; description: string; assignee: string; status: string; dueDate: string }[];
    lessonsLearned: string[];
  };
  feedback?: {
    overrideRootCause?: string;
    remediationAccuracy?: number;
    comments?: string;
    providedBy: string;
    providedAt: string;
  };
}

export interface AuditRecord {
  id: string;
  timestamp: string;
  action: string;
  user: string;
  role: string;
  resource: string;
  resourceType: string;
  namespace: string;
  sourceIP: string;
  details: Record<string, unknown>;
}
