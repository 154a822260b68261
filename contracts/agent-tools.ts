import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS, TOOL_NAMES, type FunctionTool, type ToolName } from '../domain/agent-tools';
import { INCIDENT_STATES } from '../domain/incident';

/** The chat agent's tools (domain/agent-tools.ts): each one's arguments, validated before it runs. */
export const toolArgs = {
  list_incidents: z.object({ state: z.enum(INCIDENT_STATES).optional() }).strict(),
  show_incident: z.object({ name: z.string().min(1) }).strict(),
  acknowledge_incident: z.object({ name: z.string().min(1), message: z.string().optional() }).strict(),
  snooze_incident: z
    .object({ name: z.string().min(1), duration: z.string().min(1), reason: z.string().optional() })
    .strict(),
  resolve_incident: z.object({ name: z.string().min(1), resolution: z.string().optional() }).strict(),
  show_postmortem: z.object({ name: z.string().min(1) }).strict(),
  approve_approval: z.object({ name: z.string().min(1), comment: z.string().max(2000).optional() }).strict(),
  reject_approval: z.object({ name: z.string().min(1), reason: z.string().max(2000).optional() }).strict(),
  mttr_summary: z.object({ period: z.string().optional() }).strict(),
  gateway_status: z.object({}).strict(),
  run_shell: z.object({ command: z.string().min(1) }).strict(),
} as const satisfies Record<ToolName, z.ZodTypeAny>;

let definitions: FunctionTool[] | undefined;

/**
 * The tools as OpenAI chat-completions function definitions, their JSON schemas generated from
 * the same zod schemas that validate the calls (with the OpenAPI generator the API already uses).
 * The shell is left out when it is off, so the model never plans with it.
 */
export function toolDefinitions(config: { FOGHORN_AGENT_SHELL: 'on' | 'off' }): FunctionTool[] {
  if (!definitions) {
    extendZodWithOpenApi(z);
    const registry = new OpenAPIRegistry();
    for (const name of TOOL_NAMES) registry.register(name, toolArgs[name]);
    const schemas = new OpenApiGeneratorV31(registry.definitions).generateComponents().components?.schemas ?? {};
    definitions = TOOL_NAMES.map((name) => ({
      type: 'function',
      function: {
        name,
        description: TOOL_DESCRIPTIONS[name],
        parameters: schemas[name] as Record<string, unknown>,
      },
    }));
  }
  return definitions.filter((d) => config.FOGHORN_AGENT_SHELL === 'on' || d.function.name !== 'run_shell');
}
