import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import {
  AGENTIC_CALL_TIMEOUT_MS,
  AGENTIC_INVALID,
  AGENTIC_INVALID_INPUT,
  AGENTIC_MODEL_FAILED,
  AGENTIC_UNAVAILABLE,
  agenticMessages,
  agenticToolDefinitions,
  type AgenticDecideInput,
  type AgenticDecision,
} from '../domain/agentic';
import { agenticDecideInputSchema, parseDecision } from '../contracts/agentic';
import { REDACTED, redactText } from '../domain/redact';
import { withHeartbeat } from './context';
import { openaiClient, type LlmConfig } from './llm';

/**
 * One decision of the agentic remediation loop: the incident and the steps so far in, the
 * model's next move out, validated. The workflow runs the move and calls again with what it
 * observed, so every model call and every action is its own durable, retried activity.
 */
export function createAgenticActivities(llm: LlmConfig | undefined) {
  return {
    async agenticDecide(input: AgenticDecideInput): Promise<AgenticDecision> {
      if (!llm)
        throw ApplicationFailure.nonRetryable('no LLM is configured (FOGHORN_LLM_BASE_URL)', AGENTIC_UNAVAILABLE);
      const parsedInput = agenticDecideInputSchema.safeParse(input);
      if (!parsedInput.success) {
        const problems = parsedInput.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
        throw ApplicationFailure.nonRetryable(`invalid input: ${problems}`, AGENTIC_INVALID_INPUT);
      }
      const completion = await withHeartbeat(async (cancelled) => {
        const deadline = AbortSignal.timeout(AGENTIC_CALL_TIMEOUT_MS);
        try {
          return await openaiClient(llm).chat.completions.create(
            {
              model: llm.model,
              temperature: 0.2,
              messages: agenticMessages(parsedInput.data),
              tools: agenticToolDefinitions(),
              tool_choice: 'required',
            },
            { signal: AbortSignal.any([cancelled, deadline]) },
          );
        } catch (err) {
          // Cancelled (worker shutting down, attempt timed out): Temporal's cancellation, not a model failure.
          if (cancelled.aborted) throw cancelled.reason ?? err;
          if (deadline.aborted)
            throw ApplicationFailure.retryable(
              `the model did not answer within ${AGENTIC_CALL_TIMEOUT_MS / 1000} s`,
              AGENTIC_MODEL_FAILED,
            );
          throw modelFailure(err, llm);
        }
      });
      const message = completion.choices[0]?.message;
      const call = message?.tool_calls?.[0]; // one move per step: further parallel calls are ignored
      if (!call) throw invalid('the model answered without a tool call');
      if (call.type !== 'function') throw invalid(`the model made a ${call.type} tool call, not a function call`);
      const decision = parseDecision(call.function.name, call.function.arguments, message.content ?? '');
      if (decision.kind === 'invalid') throw invalid(decision.reason);
      return decision;
    },
  };
}

const invalid = (reason: string) => ApplicationFailure.nonRetryable(redactText(reason), AGENTIC_INVALID);

/** Not our secret to show: the key is cut out of whatever the endpoint or the SDK said. */
function safe(text: string, llm: LlmConfig): string {
  return redactText(llm.apiKey ? text.split(llm.apiKey).join(REDACTED) : text);
}

/**
 * A refusal (4xx: bad key, unknown model, request too large) cannot be fixed by retrying;
 * transport errors, timeouts, 5xx and throttling can. No cause is attached: it may carry the key.
 */
function modelFailure(err: unknown, llm: LlmConfig): ApplicationFailure {
  const status = err instanceof OpenAI.APIError ? err.status : undefined;
  const detail = safe(err instanceof Error ? err.message : String(err), llm);
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
    return ApplicationFailure.nonRetryable(
      `the model endpoint refused the request (${status}): ${detail}`,
      AGENTIC_UNAVAILABLE,
    );
  return ApplicationFailure.retryable(
    `the model endpoint failed${status ? ` (${status})` : ''}: ${detail}`,
    AGENTIC_MODEL_FAILED,
  );
}

export type AgenticActivities = ReturnType<typeof createAgenticActivities>;
