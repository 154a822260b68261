import OpenAI from 'openai';
import { z } from 'zod';
import type { AnalysisContext, Insight } from '../domain/analyzer';
import { gitOpsContextOf, logAnalysisOf } from '../domain/evidence-analysis';
import { ACTION_TYPES } from '../domain/runbook';
import { actionSchema } from '../contracts/runbooks';

export interface LlmConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** A client for an OpenAI-compatible endpoint; Temporal does the patient retrying, so the SDK tries twice at most. */
export function openaiClient(config: LlmConfig): OpenAI {
  return new OpenAI({ baseURL: config.baseUrl, apiKey: config.apiKey || 'unused', maxRetries: 1, timeout: 60_000 });
}

/** What we ask the model for; anything else is invalid output (and we fall back). */
const llmInsightSchema = z.object({
  analysis: z.string().min(1),
  rootCause: z.string().min(1),
  confidence: z.number().min(0).max(1),
  recommendations: z.array(z.string().min(1)).max(10),
  suggestedActions: z
    .array(
      z.object({
        name: z.string().min(1),
        action: z.enum(ACTION_TYPES),
        description: z.string(),
        params: z.record(z.unknown()),
      }),
    )
    .max(10)
    .superRefine((actions, ctx) =>
      actions.forEach((a, i) => {
        const parsed = actionSchema.safeParse({ type: a.action, params: a.params });
        if (!parsed.success)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'params'],
            message: parsed.error.issues[0]?.message ?? 'invalid params',
          });
      }),
    ),
  cascadeAnalysis: z.string().default(''),
  blastRadiusPrediction: z.string().default(''),
});

const SYSTEM_PROMPT = [
  'You are an SRE assistant analysing a Kubernetes incident for Foghorn.',
  'Answer with one JSON object with exactly these keys: analysis (string), rootCause (string),',
  'confidence (number 0..1), recommendations (array of strings), suggestedActions (array of',
  `{name, action, description, params}; action is one of ${ACTION_TYPES.join(', ')}),`,
  'cascadeAnalysis (string, "" if no related incidents), blastRadiusPrediction (string, "" if unknown).',
  'Use only the facts given. Never invent logs, commits or metrics.',
  'The facts may hold evidence collected from the cluster: citable items with ids (E1, E2, …), the',
  'changes before the first failure, revision health, pod terminations and log lines. End every',
  'recommendation with the ids it rests on, as "(evidence E1, E3)", or "(rests on the signal alone)".',
  'Never conclude from events alone: when the evidence holds no change, termination or log line, say',
  'the analysis is inconclusive.',
].join(' ');

/** The facts the model sees, as compact JSON (its length is the Analysis event's contextSize). */
export function llmContext(ctx: AnalysisContext): string {
  return JSON.stringify(ctx);
}

/**
 * Asks an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, LiteLLM) for a
 * structured insight. Throws on transport errors and on output that fails validation.
 */
export async function analyzeWithLlm(config: LlmConfig, ctx: AnalysisContext, signal?: AbortSignal): Promise<Insight> {
  const client = openaiClient(config);
  const completion = await client.chat.completions.create(
    {
      model: config.model,
      temperature: 0.2,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: llmContext(ctx) },
      ],
    },
    { signal },
  );
  const content = completion.choices[0]?.message?.content ?? '';
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    throw new Error('the model did not answer with JSON');
  }
  const parsed = llmInsightSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `the model's answer is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const out = parsed.data;
  return {
    ...out,
    recommendation: out.recommendations[0] ?? '',
    // The same evidence texts as the rules analyzer's: facts, not the model's retelling of them.
    logAnalysis: ctx.evidence ? logAnalysisOf(ctx.evidence) : '',
    gitOpsContext: ctx.evidence
      ? gitOpsContextOf(ctx.evidence, ctx.incident.resource)
      : ctx.evidenceGap
        ? `No cluster evidence: ${ctx.evidenceGap}.`
        : '',
    relatedEvents: ctx.related.map((r) => r.name),
  };
}
