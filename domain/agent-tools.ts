/**
 * The one tool set of the chat agent, shared by the LLM agent (as function definitions) and
 * the built-in ChatOps agent (slash commands map onto the same calls), so both act through
 * the same code paths and audit trail. Each tool's arguments are validated by
 * contracts/agent-tools.ts.
 */
const TOOLS = [
  'list_incidents',
  'show_incident',
  'acknowledge_incident',
  'snooze_incident',
  'resolve_incident',
  'show_postmortem',
  'approve_approval',
  'reject_approval',
  'mttr_summary',
  'gateway_status',
  'run_shell',
] as const;

export type ToolName = (typeof TOOLS)[number];
export const TOOL_NAMES: ToolName[] = [...TOOLS];

export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  list_incidents: 'List open incidents (newest first), optionally only those in one state.',
  show_incident: 'Show one incident by name (e.g. INC-20260101-001): state, severity, resource, timeline summary.',
  acknowledge_incident: 'Acknowledge an incident: pauses its escalation. Optional message.',
  snooze_incident: 'Snooze notifications of an incident for a Go duration such as 30m or 2h (max 24h).',
  resolve_incident: 'Resolve an incident, with an optional resolution text.',
  show_postmortem: 'Show the postmortem of an incident (incident name or PM-... name).',
  approve_approval:
    'Approve a pending remediation approval by name (e.g. APR-20260101-001) so its plan runs. Optional comment. Only when the user asks to approve.',
  reject_approval:
    'Reject a pending remediation approval by name (e.g. APR-20260101-001) so its plan does not run. Optional reason. Only when the user asks to reject.',
  mttr_summary: 'Mean time to resolve over a period such as 7d or 30d (default 30d), with a PNG trend chart.',
  gateway_status: 'List the chat gateway adapters: address, path, callback host, secret set, queue depth, last error.',
  run_shell: 'Run a shell command on the Foghorn worker host and return its output (timeout and output cap apply).',
};

/** An OpenAI chat-completions function tool (the shape the SDK's ChatCompletionFunctionTool takes). */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ToolCall {
  tool: ToolName;
  args: Record<string, unknown>;
}

/** Who asks: actions are audited as `webhook:<user_id|chat_id>`. */
export interface ToolCaller {
  chatId: string;
  userId?: string;
  messageId: string;
}

export function callerIdentity(caller: Pick<ToolCaller, 'chatId' | 'userId'>): string {
  return `webhook:${caller.userId ?? caller.chatId}`;
}

export interface ToolResult {
  /** Text for the user (or the model). */
  text: string;
  /** True when the tool refused or failed: the text says why. */
  error?: boolean;
  /** A chart rendered by the tool, stored in GridFS. */
  image?: { fileId: string; mime: string; filename: string };
}
