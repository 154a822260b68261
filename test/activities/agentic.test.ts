import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgenticActivities } from '../../activities/agentic';
import type { LlmConfig } from '../../activities/llm';
import {
  AGENTIC_INVALID,
  AGENTIC_MODEL_FAILED,
  AGENTIC_UNAVAILABLE,
  type AgenticDecideInput,
  type AgenticDecision,
} from '../../domain/agentic';
import { useLlmServer, type LlmRequestBody } from '../harness/llm-server';

const API_KEY = 'sk-agentic-test-0123456789abcdef';

/** The scripted model: the incident's description names what it answers. */
function model(body: LlmRequestBody) {
  const scenario = /Description: (\S+)/.exec(String(body.messages[1]?.content))?.[1];
  switch (scenario) {
    case 'read':
      return {
        content: 'Check why the pods restart.',
        toolCalls: [{ name: 'log_tail', args: { pod: 'api-7d9f-abcde', previous: true } }],
      };
    case 'act':
      return {
        content: '',
        toolCalls: [{ name: 'adjust_resources', args: { container: 'app', memoryLimit: '1Gi', reasoning: 'OOM' } }],
      };
    case 'finish':
      return { content: '', toolCalls: [{ name: 'finish', args: { verdict: 'fixed', summary: 'pods ready again' } }] };
    case 'chatty':
      return { content: 'I think you should restart it.' };
    case 'bad-args':
      return { content: '', toolCalls: [{ name: 'scale_deployment', args: { replicas: 5000 } }] };
    case 'unknown-tool':
      return { content: '', toolCalls: [{ name: 'run_script', args: { script: 'reboot' } }] };
    case 'overloaded':
      return { status: 500, content: 'model overloaded' };
    case 'bad-key':
      return { status: 401, content: `Incorrect API key provided: ${API_KEY}` };
    default:
      return { content: `unexpected scenario ${scenario}` };
  }
}

const input = (scenario: string, extra: Partial<AgenticDecideInput> = {}): AgenticDecideInput => ({
  incident: {
    name: 'INC-20261123-001',
    namespace: 'shop',
    cluster: 'prod',
    resource: 'Deployment/api',
    signalType: 'OOMKilled',
    severity: 'high',
    description: scenario,
  },
  insight: { rootCause: 'memory limit too low', analysis: 'heap grows', recommendations: ['raise to 1Gi'] },
  steps: [],
  stepNumber: 1,
  maxSteps: 10,
  ...extra,
});

describe('agenticDecide against an OpenAI-compatible endpoint', () => {
  let llm: Awaited<ReturnType<typeof useLlmServer>>;
  beforeAll(async () => {
    llm = await useLlmServer(model);
  });
  afterAll(() => llm?.stop());

  const defaultConfig = (): LlmConfig => ({ baseUrl: llm.baseUrl, apiKey: API_KEY, model: 'test-model' });
  /** One activity execution; `config` null means no LLM configured. */
  const decide = (i: AgenticDecideInput, config: LlmConfig | null = defaultConfig()) =>
    new MockActivityEnvironment().run(createAgenticActivities(config ?? undefined).agenticDecide, i);
  /** The ApplicationFailure the activity throws. */
  const failure = async (i: AgenticDecideInput, config?: LlmConfig | null): Promise<ApplicationFailure> => {
    const err = await decide(i, config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  };

  it('a read: the tool and its arguments, the message text as reasoning', async () => {
    await expect(decide(input('read'))).resolves.toEqual<AgenticDecision>({
      kind: 'read',
      tool: 'log_tail',
      params: { pod: 'api-7d9f-abcde', previous: true },
      reasoning: 'Check why the pods restart.',
    });
  });

  it('an action: the runbook action and params, the reasoning argument when the message has no text', async () => {
    await expect(decide(input('act'))).resolves.toEqual<AgenticDecision>({
      kind: 'action',
      action: 'AdjustResources',
      params: { container: 'app', memoryLimit: '1Gi' },
      reasoning: 'OOM',
    });
  });

  it('a finish verdict', async () => {
    await expect(decide(input('finish'))).resolves.toMatchObject({
      kind: 'verdict',
      verdict: 'fixed',
      summary: 'pods ready again',
    });
  });

  it('sends the tools (required), the incident and the previous steps', async () => {
    const steps: AgenticDecideInput['steps'] = [
      { step: 1, reasoning: 'See the pods.', tool: 'list_pods', params: {}, observation: 'api-1 OOMKilled 4 times' },
      { step: 2, reasoning: 'Restart.', tool: 'RestartDeployment', params: {}, observation: 'restarted' },
    ];
    await decide(input('read', { steps, stepNumber: 3 }));
    const body = [...llm.requests].reverse().find((r) => r.body.messages.length > 3)!.body;
    expect(body.model).toBe('test-model');
    expect((body as { tool_choice?: unknown }).tool_choice).toBe('required');
    expect(body.tools!.map((t) => t.function.name)).toEqual([
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
    ]);
    expect(body.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'user',
    ]);
    expect(body.messages[1].content).toContain('root cause: memory limit too low');
    expect(body.messages[2]).toMatchObject({
      content: 'See the pods.',
      tool_calls: [{ id: 'step-1', function: { name: 'list_pods', arguments: '{}' } }],
    });
    expect(body.messages[3]).toMatchObject({
      role: 'tool',
      tool_call_id: 'step-1',
      content: 'api-1 OOMKilled 4 times',
    });
    expect(body.messages[4]).toMatchObject({ tool_calls: [{ function: { name: 'restart_deployment' } }] });
    expect(body.messages[6].content).toBe('Step 3 of 10: call the next tool.');
  });

  it.each([
    ['no tool call', 'chatty', /without a tool call/],
    ['arguments failing the schema', 'bad-args', /invalid arguments for scale_deployment: replicas/],
    ['an unknown tool', 'unknown-tool', /unknown tool "run_script"/],
  ])('%s (scenario %s): non-retryable', async (_what, scenario, message) => {
    const err = await failure(input(scenario));
    expect(err).toMatchObject({ type: AGENTIC_INVALID, nonRetryable: true });
    expect(err.message).toMatch(message);
  });

  it('a 500 from the model: retryable', async () => {
    const err = await failure(input('overloaded'));
    expect(err).toMatchObject({ type: AGENTIC_MODEL_FAILED, nonRetryable: false });
    expect(err.message).toMatch(/500/);
  });

  it('a refused key: non-retryable, and the key is in no error text', async () => {
    const err = await failure(input('bad-key'));
    expect(err).toMatchObject({ type: AGENTIC_UNAVAILABLE, nonRetryable: true });
    expect(err.message).toMatch(/refused the request \(401\)/);
    expect(JSON.stringify({ ...err, message: err.message, stack: err.stack, cause: err.cause })).not.toContain(API_KEY);
    expect(err.message).not.toContain('0123456789abcdef');
  });

  it('an unreachable endpoint: retryable', async () => {
    const closed = await useLlmServer(model);
    await closed.stop();
    const err = await failure(input('read'), { baseUrl: closed.baseUrl, apiKey: API_KEY, model: 'm' });
    expect(err).toMatchObject({ type: AGENTIC_MODEL_FAILED, nonRetryable: false });
    expect(err.message).not.toContain(API_KEY);
  });

  it('no LLM configured: non-retryable', async () => {
    const err = await failure(input('read'), null);
    expect(err).toMatchObject({ type: AGENTIC_UNAVAILABLE, nonRetryable: true });
  });
});
