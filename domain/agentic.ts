import type { ActivityTimeouts } from './activity-options';
import type { FunctionTool } from './agent-tools';
import { clip, KUBE_READ_KINDS, MAX_LOG_LINES, type KubeReadKind } from './kube-actions';
import { redactText } from './redact';
import type { Severity, SignalType } from './vocabulary';

/**
 * The agentic remediation strategy (DESIGN §8): observe → decide → act, one model call per
 * step. The workflow owns the loop and runs each read or action itself; the agenticDecide
 * activity only turns "everything so far" into the next validated move. The model names what
 * to look at or do, never where: cluster, namespace and Deployment always come from the incident,
 * so a confused (or prompt-injected) model cannot reach another workload. HttpRequest and
 * RunScript are never offered. The model's calls and the activity's input are validated by
 * contracts/agentic.ts.
 */

export const AGENTIC_MAX_STEPS = 10;
export const AGENTIC_BUDGET_MS = 10 * 60_000;

/** The model's answer has no tool call, an unknown tool or bad arguments: the plan fails with it. */
export const AGENTIC_INVALID = 'AgenticInvalidAnswer';
/** No model configured, or the endpoint refuses us (bad key, unknown model): retrying cannot help. */
export const AGENTIC_UNAVAILABLE = 'AgenticModelUnavailable';
/** The model endpoint failed transiently (transport, timeout, 5xx, 429): retried. */
export const AGENTIC_MODEL_FAILED = 'AgenticModelFailed';
/** The workflow passed an input that fails the schema (a bug, not the model's doing). */
export const AGENTIC_INVALID_INPUT = 'AgenticInvalidInput';

/** One model call is bounded by this (the activity aborts it). */
export const AGENTIC_CALL_TIMEOUT_MS = 60_000;

/**
 * A step waits on one model call (≤ 60 s) and heartbeats meanwhile; a transient failure is tried
 * 3 times within 4 minutes, so one bad step cannot eat the loop's whole 10-minute budget.
 */
export const AGENTIC_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '90s',
  heartbeatTimeout: '20s',
  scheduleToCloseTimeout: '4m',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '20s',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [AGENTIC_INVALID, AGENTIC_UNAVAILABLE, AGENTIC_INVALID_INPUT],
  },
} satisfies ActivityTimeouts;

// ---------------------------------------------------------------------------------------------
// Tools: contracts/agentic.ts validates the calls, JSON Schemas describe them to the model
// ---------------------------------------------------------------------------------------------

export const MAX_AGENTIC_REPLICAS = 50;
export const AGENTIC_VERDICTS = ['fixed', 'give_up'] as const;

/**
 * Each tool's arguments, as validated. Every tool also takes a short `reasoning`, for models
 * that answer with a tool call and no text.
 */
export interface AgenticToolArgs {
  get_resource: { kind: KubeReadKind; name: string; reasoning?: string };
  list_pods: { reasoning?: string };
  recent_events: { kind: KubeReadKind; name: string; reasoning?: string };
  log_tail: { pod: string; container?: string; previous?: boolean; tailLines?: number; reasoning?: string };
  restart_deployment: { reasoning?: string };
  scale_deployment: { replicas: number; reasoning?: string };
  /** At least one of memoryLimit and cpuLimit. */
  adjust_resources: { container: string; memoryLimit?: string; cpuLimit?: string; reasoning?: string };
  rollback_deployment: { toRevision?: number; reasoning?: string };
  delete_pod: { pod: string; reasoning?: string };
  finish: { verdict: (typeof AGENTIC_VERDICTS)[number]; summary: string; reasoning?: string };
}

export type AgenticToolName = keyof AgenticToolArgs;
export const AGENTIC_TOOL_NAMES: AgenticToolName[] = [
  'get_resource',
  'list_pods',
  'recent_events',
  'log_tail',
  'restart_deployment',
  'scale_deployment',
  'adjust_resources',
  'rollback_deployment',
  'delete_pod',
  'finish',
];

export const AGENTIC_READ_TOOLS = ['get_resource', 'list_pods', 'recent_events', 'log_tail'] as const;
export type AgenticReadTool = (typeof AGENTIC_READ_TOOLS)[number];

/** Action tools and the runbook action each one is (its params are valid runbook action params). */
export const AGENTIC_ACTION_TOOLS = {
  restart_deployment: 'RestartDeployment',
  scale_deployment: 'ScaleDeployment',
  adjust_resources: 'AdjustResources',
  rollback_deployment: 'RollbackDeployment',
  delete_pod: 'DeletePod',
} as const;
export type AgenticActionTool = keyof typeof AGENTIC_ACTION_TOOLS;
export type AgenticAction = (typeof AGENTIC_ACTION_TOOLS)[AgenticActionTool];

const DESCRIPTIONS: Record<AgenticToolName, string> = {
  get_resource:
    "Read one object's status (replicas, conditions, containers): a Deployment, Pod, Node, StatefulSet or DaemonSet.",
  list_pods: "List the incident workload's pods: phase, readiness, restarts, container states and last termination.",
  recent_events:
    'Recent Kubernetes events about one object (warnings first), e.g. FailedScheduling, BackOff, OOMKilling.',
  log_tail: "The last lines of a pod's log; previous=true reads the crashed container's previous run.",
  restart_deployment: "Rolling restart of the incident's Deployment (kubectl rollout restart).",
  scale_deployment: `Set the incident Deployment's replica count (0..${MAX_AGENTIC_REPLICAS}).`,
  adjust_resources:
    'Set the memory and/or CPU limit of one container of the incident Deployment (Kubernetes quantities such as "512Mi", "500m").',
  rollback_deployment: 'Roll the incident Deployment back to its previous revision, or to toRevision.',
  delete_pod: "Delete one pod of the incident's workload (its controller replaces it).",
  finish:
    'End the remediation: verdict "fixed" once observations show the workload healthy, "give_up" when you cannot fix it safely. summary says why.',
};

const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });
const REASONING = str('One or two sentences: why this call (when your message has no text).');
const KIND = { type: 'string', enum: [...KUBE_READ_KINDS] };
const QUANTITY = (what: string) => str(`New ${what} limit, a Kubernetes quantity`);

/** The JSON Schema of each tool's arguments, as the model sees them (kept equal to contracts/agentic.ts agenticToolArgs by a unit test). */
const PARAMETERS: Record<AgenticToolName, { properties: Record<string, unknown>; required: string[] }> = {
  get_resource: { properties: { kind: KIND, name: str('Object name') }, required: ['kind', 'name'] },
  list_pods: { properties: {}, required: [] },
  recent_events: { properties: { kind: KIND, name: str('Object name') }, required: ['kind', 'name'] },
  log_tail: {
    properties: {
      pod: str('Pod name'),
      container: str('Container name (default: the only or first container)'),
      previous: { type: 'boolean', description: "The previous (crashed) container's log" },
      tailLines: { type: 'integer', minimum: 1, maximum: MAX_LOG_LINES, description: 'Lines to read (default 50)' },
    },
    required: ['pod'],
  },
  restart_deployment: { properties: {}, required: [] },
  scale_deployment: {
    properties: { replicas: { type: 'integer', minimum: 0, maximum: MAX_AGENTIC_REPLICAS } },
    required: ['replicas'],
  },
  adjust_resources: {
    properties: {
      container: str('Container name'),
      memoryLimit: QUANTITY('memory'),
      cpuLimit: QUANTITY('CPU'),
    },
    required: ['container'],
  },
  rollback_deployment: {
    properties: { toRevision: { type: 'integer', minimum: 1, description: 'Default: the previous revision' } },
    required: [],
  },
  delete_pod: { properties: { pod: str('Pod name') }, required: ['pod'] },
  finish: {
    properties: { verdict: { type: 'string', enum: ['fixed', 'give_up'] }, summary: str('What was found and done') },
    required: ['verdict', 'summary'],
  },
};

/** The tools as OpenAI chat-completions function definitions. */
export function agenticToolDefinitions(): FunctionTool[] {
  return AGENTIC_TOOL_NAMES.map((name) => ({
    type: 'function',
    function: {
      name,
      description: DESCRIPTIONS[name],
      parameters: {
        type: 'object',
        properties: { ...PARAMETERS[name].properties, reasoning: REASONING },
        required: PARAMETERS[name].required,
        additionalProperties: false,
      },
    },
  }));
}

// ---------------------------------------------------------------------------------------------
// Decisions
// ---------------------------------------------------------------------------------------------

/** What the model asked for (its arguments without `reasoning`). */
export type AgenticArgsOf<T extends AgenticToolName> = Omit<AgenticToolArgs[T], 'reasoning'>;

export type AgenticReadDecision = {
  [T in AgenticReadTool]: { kind: 'read'; tool: T; params: AgenticArgsOf<T>; reasoning: string };
}[AgenticReadTool];

export type AgenticDecision =
  | AgenticReadDecision
  | {
      kind: 'action';
      action: AgenticAction;
      /** Runbook action params (domain/runbook.ts) without a target: the incident's Deployment is meant. */
      params: Record<string, unknown>;
      reasoning: string;
    }
  | { kind: 'verdict'; verdict: 'fixed' | 'give_up'; summary: string; reasoning: string };

export type AgenticParseResult = AgenticDecision | { kind: 'invalid'; reason: string };

export const MAX_REASONING_CHARS = 500;

export const isAgenticReadTool = (name: AgenticToolName): name is AgenticReadTool =>
  (AGENTIC_READ_TOOLS as readonly string[]).includes(name);

// ---------------------------------------------------------------------------------------------
// The conversation
// ---------------------------------------------------------------------------------------------

/** One step so far, as the workflow records it. */
export interface AgenticStepRecord {
  step: number;
  reasoning: string;
  /** The tool called (`get_resource`, …, `finish`); an action type (`RestartDeployment`) is accepted too. */
  tool: string;
  params: Record<string, unknown>;
  /** What the read returned or the action did (or why it failed), as text. */
  observation: string;
}

export const MAX_STEP_RECORDS = 50;

/** What the agenticDecide activity takes: the incident, its insight and every step so far. */
export interface AgenticDecideInput {
  incident: {
    name: string;
    namespace: string;
    cluster: string;
    resource: string;
    signalType: SignalType;
    severity: Severity;
    description: string;
  };
  insight: { rootCause: string; analysis: string; recommendations: string[] } | null;
  steps: AgenticStepRecord[];
  stepNumber: number;
  maxSteps: number;
}

/** An OpenAI chat-completions message, in the wire shape the SDK takes. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

export const MAX_OBSERVATION_CHARS = 4000;

/** An observation as the model reads it: text (JSON for objects), secrets out, at most `maxChars`. */
export function clipObservation(value: unknown, maxChars = MAX_OBSERVATION_CHARS): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === undefined) text = '';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value); // a cycle: the summary beats nothing
    }
  }
  return clip(redactText(text), maxChars);
}

const ACTION_TOOL_OF = Object.fromEntries(
  Object.entries(AGENTIC_ACTION_TOOLS).map(([tool, action]) => [action, tool]),
) as Record<string, AgenticActionTool>;

export function agenticSystemPrompt(maxSteps: number): string {
  return [
    "You are Foghorn's remediation agent, fixing one Kubernetes incident step by step.",
    'Each turn, call exactly one tool: a read tool to observe (get_resource, list_pods, recent_events, log_tail),',
    'an action tool to change the cluster (restart_deployment, scale_deployment, adjust_resources,',
    'rollback_deployment, delete_pod), or finish.',
    "Actions always apply to the incident's own Deployment, namespace and cluster.",
    'Observe before you act, prefer the least disruptive action, and observe again after an action to see whether it helped.',
    'Call finish with verdict "fixed" once observations show the workload healthy, or "give_up" when you cannot fix it safely.',
    'Use only facts from the incident and the observations; never invent them.',
    'Say in one or two sentences why you make each call (in your message, or the reasoning argument).',
    `You have at most ${maxSteps} steps.`,
  ].join(' ');
}

function incidentPrompt(input: AgenticDecideInput): string {
  const { incident: i, insight } = input;
  const lines = [
    `Incident ${i.name}: ${i.signalType} (severity ${i.severity}) on ${i.resource} in namespace ${i.namespace}, cluster ${i.cluster}.`,
    `Description: ${i.description || '(none)'}`,
  ];
  if (insight) {
    lines.push(`AI insight, root cause: ${insight.rootCause}`, `Analysis: ${insight.analysis}`);
    if (insight.recommendations.length) lines.push('Recommendations:', ...insight.recommendations.map((r) => `- ${r}`));
  } else {
    lines.push('No AI insight is available.');
  }
  return redactText(lines.join('\n'));
}

/**
 * System prompt, the incident (and its insight), then each previous step as the tool call the
 * model made and its result, then where the loop stands.
 */
export function agenticMessages(input: AgenticDecideInput): ChatMessage[] {
  const history = input.steps.flatMap((s): ChatMessage[] => {
    const id = `step-${s.step}`;
    const tool = ACTION_TOOL_OF[s.tool] ?? s.tool;
    return [
      {
        role: 'assistant',
        content: clip(s.reasoning, MAX_REASONING_CHARS) || null,
        tool_calls: [{ id, type: 'function', function: { name: tool, arguments: JSON.stringify(s.params) } }],
      },
      { role: 'tool', tool_call_id: id, content: clipObservation(s.observation) },
    ];
  });
  const left = input.maxSteps - input.stepNumber;
  return [
    { role: 'system', content: agenticSystemPrompt(input.maxSteps) },
    { role: 'user', content: incidentPrompt(input) },
    ...history,
    {
      role: 'user',
      content: `Step ${input.stepNumber} of ${input.maxSteps}${left === 0 ? ' (the last one)' : ''}: call the next tool.`,
    },
  ];
}
