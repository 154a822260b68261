import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS, TOOL_NAMES, toolArgs } from './agent-tools';
import type { Config } from '../config/env';

/** An OpenAI chat-completions function tool (the shape the SDK's ChatCompletionFunctionTool takes). */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

let definitions: FunctionTool[] | undefined;

/**
 * The tools as OpenAI chat-completions function definitions, their JSON schemas generated from
 * the same zod schemas that validate the calls (with the OpenAPI generator the API already uses).
 * The shell is left out when it is off, so the model never plans with it. Kept apart from
 * agent-tools.ts so the workflow bundle, which imports that, does not carry the generator.
 */
export function toolDefinitions(config: Pick<Config, 'FOGHORN_AGENT_SHELL'>): FunctionTool[] {
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
