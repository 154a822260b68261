import { z } from 'zod';
import {
  AGENTIC_ACTION_TOOLS,
  AGENTIC_VERDICTS,
  isAgenticReadTool,
  MAX_AGENTIC_REPLICAS,
  MAX_REASONING_CHARS,
  MAX_STEP_RECORDS,
  type AgenticArgsOf,
  type AgenticDecideInput,
  type AgenticParseResult,
  type AgenticReadDecision,
  type AgenticToolArgs,
  type AgenticToolName,
} from '../domain/agentic';
import { clip, KUBE_READ_KINDS, MAX_LOG_LINES } from '../domain/kube-actions';
import { dnsLabelSchema, objectNameSchema, quantitySchema } from './kubernetes';
import { sameType } from './type-check';
import { severitySchema, signalTypeSchema } from './vocabulary';

/**
 * The agentic strategy at its edges (domain/agentic.ts): the model's tool calls, validated into
 * decisions, and the agenticDecide activity's input.
 */

/** Every tool also takes a short `reasoning`, for models that answer with a tool call and no text. */
const reasoningArg = z.string().max(2000).optional();

const adjustArgs = z
  .object({
    container: dnsLabelSchema,
    memoryLimit: quantitySchema.optional(),
    cpuLimit: quantitySchema.optional(),
    reasoning: reasoningArg,
  })
  .strict()
  .refine((p) => p.memoryLimit !== undefined || p.cpuLimit !== undefined, {
    message: 'at least one of memoryLimit, cpuLimit is required',
  });

export const agenticToolArgs = {
  get_resource: z.object({ kind: z.enum(KUBE_READ_KINDS), name: objectNameSchema, reasoning: reasoningArg }).strict(),
  list_pods: z.object({ reasoning: reasoningArg }).strict(),
  recent_events: z.object({ kind: z.enum(KUBE_READ_KINDS), name: objectNameSchema, reasoning: reasoningArg }).strict(),
  log_tail: z
    .object({
      pod: objectNameSchema,
      container: dnsLabelSchema.optional(),
      previous: z.boolean().optional(),
      tailLines: z.number().int().min(1).max(MAX_LOG_LINES).optional(),
      reasoning: reasoningArg,
    })
    .strict(),
  restart_deployment: z.object({ reasoning: reasoningArg }).strict(),
  scale_deployment: z
    .object({ replicas: z.number().int().min(0).max(MAX_AGENTIC_REPLICAS), reasoning: reasoningArg })
    .strict(),
  adjust_resources: adjustArgs,
  rollback_deployment: z.object({ toRevision: z.number().int().min(1).optional(), reasoning: reasoningArg }).strict(),
  delete_pod: z.object({ pod: objectNameSchema, reasoning: reasoningArg }).strict(),
  finish: z
    .object({ verdict: z.enum(AGENTIC_VERDICTS), summary: z.string().min(1).max(2000), reasoning: reasoningArg })
    .strict(),
} as const satisfies Record<AgenticToolName, z.ZodTypeAny>;
sameType<{ [T in AgenticToolName]: z.output<(typeof agenticToolArgs)[T]> }, AgenticToolArgs>(true);

const isToolName = (name: string): name is AgenticToolName => Object.hasOwn(agenticToolArgs, name);

/**
 * The model's tool call as a decision, or why it is invalid. `reasoning` is the assistant
 * message's text; when empty, the call's own `reasoning` argument is used.
 */
export function parseDecision(toolName: string, rawArgs: string, reasoning: string): AgenticParseResult {
  if (!isToolName(toolName))
    return { kind: 'invalid', reason: `the model called an unknown tool ${JSON.stringify(clip(toolName, 80))}` };
  let json: unknown;
  try {
    json = JSON.parse(rawArgs.trim() || '{}');
  } catch {
    return { kind: 'invalid', reason: `the arguments of ${toolName} are not JSON` };
  }
  const parsed = agenticToolArgs[toolName].safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
    return { kind: 'invalid', reason: `invalid arguments for ${toolName}: ${problems}` };
  }
  const { reasoning: argReasoning, ...params } = parsed.data as { reasoning?: string } & Record<string, unknown>;
  const why = clip((reasoning.trim() || argReasoning?.trim() || '').replace(/\s+/g, ' '), MAX_REASONING_CHARS);
  if (toolName === 'finish') {
    const { verdict, summary } = params as AgenticArgsOf<'finish'>;
    return {
      kind: 'verdict',
      verdict,
      summary: clip(summary, MAX_REASONING_CHARS),
      reasoning: why || clip(summary, MAX_REASONING_CHARS),
    };
  }
  if (isAgenticReadTool(toolName))
    return { kind: 'read', tool: toolName, params, reasoning: why } as AgenticReadDecision;
  return { kind: 'action', action: AGENTIC_ACTION_TOOLS[toolName], params, reasoning: why };
}

export const agenticDecideInputSchema = z.object({
  incident: z.object({
    name: z.string().min(1).max(100),
    namespace: z.string().min(1).max(253),
    cluster: z.string().min(1).max(253),
    resource: z.string().min(1).max(300),
    signalType: signalTypeSchema,
    severity: severitySchema,
    description: z.string().max(10_000),
  }),
  insight: z
    .object({ rootCause: z.string(), analysis: z.string(), recommendations: z.array(z.string()).max(50) })
    .nullable(),
  steps: z
    .array(
      z.object({
        step: z.number().int().min(1),
        reasoning: z.string(),
        tool: z.string().min(1),
        params: z.record(z.unknown()),
        observation: z.string(),
      }),
    )
    .max(MAX_STEP_RECORDS),
  stepNumber: z.number().int().min(1),
  maxSteps: z.number().int().min(1).max(MAX_STEP_RECORDS),
});

sameType<z.input<typeof agenticDecideInputSchema>, AgenticDecideInput>(true);
