import { z } from 'zod';
import {
  AGENTIC_ACTIVITY_OPTIONS,
  AGENTIC_INVALID,
  AGENTIC_TOOL_NAMES,
  AGENTIC_UNAVAILABLE,
  agenticMessages,
  agenticToolDefinitions,
  clipObservation,
  type AgenticDecideInput,
} from '../../domain/agentic';
import { agenticToolArgs, parseDecision } from '../../contracts/agentic';
import { actionSchema } from '../../contracts/runbooks';

const incident: AgenticDecideInput['incident'] = {
  name: 'INC-20261123-001',
  namespace: 'shop',
  cluster: 'prod',
  resource: 'Deployment/api',
  signalType: 'OOMKilled',
  severity: 'high',
  description: 'api was OOMKilled 4 times',
};

const args = (value: Record<string, unknown>) => JSON.stringify(value);

describe('parseDecision', () => {
  it('reads: the tool and its arguments, the message text as reasoning', () => {
    expect(parseDecision('get_resource', args({ kind: 'Pod', name: 'api-7d9f-abcde' }), 'Look at the pod.')).toEqual({
      kind: 'read',
      tool: 'get_resource',
      params: { kind: 'Pod', name: 'api-7d9f-abcde' },
      reasoning: 'Look at the pod.',
    });
    expect(parseDecision('list_pods', '', '')).toEqual({ kind: 'read', tool: 'list_pods', params: {}, reasoning: '' });
    expect(
      parseDecision('log_tail', args({ pod: 'api-1', previous: true, tailLines: 100, reasoning: 'crash log' }), ''),
    ).toEqual({
      kind: 'read',
      tool: 'log_tail',
      params: { pod: 'api-1', previous: true, tailLines: 100 },
      reasoning: 'crash log',
    });
  });

  it('actions: the runbook action and params a runbook step would take', () => {
    const cases: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
      ['restart_deployment', {}, 'RestartDeployment', {}],
      ['scale_deployment', { replicas: 3 }, 'ScaleDeployment', { replicas: 3 }],
      [
        'adjust_resources',
        { container: 'app', memoryLimit: '1Gi' },
        'AdjustResources',
        { container: 'app', memoryLimit: '1Gi' },
      ],
      ['rollback_deployment', { toRevision: 2 }, 'RollbackDeployment', { toRevision: 2 }],
      ['delete_pod', { pod: 'api-1' }, 'DeletePod', { pod: 'api-1' }],
    ];
    for (const [tool, given, action, params] of cases) {
      const decision = parseDecision(tool, args({ ...given, reasoning: 'because' }), '');
      expect(decision).toEqual({ kind: 'action', action, params, reasoning: 'because' });
      expect(actionSchema.safeParse({ type: action, params }).success).toBe(true);
    }
  });

  it('finish: the verdict and its summary', () => {
    expect(parseDecision('finish', args({ verdict: 'fixed', summary: 'memory raised, pods ready' }), '')).toEqual({
      kind: 'verdict',
      verdict: 'fixed',
      summary: 'memory raised, pods ready',
      reasoning: 'memory raised, pods ready',
    });
    expect(parseDecision('finish', args({ verdict: 'give_up', summary: 'image missing' }), 'No fix.')).toMatchObject({
      verdict: 'give_up',
      reasoning: 'No fix.',
    });
  });

  it('prefers the message text to the reasoning argument, and clips it to 500 characters', () => {
    const long = 'why '.repeat(300);
    const decision = parseDecision('list_pods', args({ reasoning: 'argument' }), long);
    expect(decision.kind === 'read' && decision.reasoning).toHaveLength(500);
    expect(decision).toMatchObject({ reasoning: expect.stringMatching(/^why why .*…$/) });
  });

  it.each([
    ['an unknown tool', 'run_script', args({ script: 'rm -rf /' }), /unknown tool "run_script"/],
    ['HttpRequest', 'http_request', args({ url: 'http://x' }), /unknown tool/],
    ['arguments that are not JSON', 'scale_deployment', '{replicas: 3', /not JSON/],
    ['too many replicas', 'scale_deployment', args({ replicas: 51 }), /replicas: .*50/],
    [
      'a target from the model',
      'restart_deployment',
      args({ namespace: 'kube-system' }),
      /Unrecognized key.*namespace/,
    ],
    [
      'a bad quantity',
      'adjust_resources',
      args({ container: 'app', memoryLimit: 'lots' }),
      /memoryLimit: must be a Kubernetes quantity/,
    ],
    ['no limit to adjust', 'adjust_resources', args({ container: 'app' }), /at least one of memoryLimit, cpuLimit/],
    ['an unknown kind', 'get_resource', args({ kind: 'Secret', name: 'db' }), /kind: Invalid enum value/],
    ['an unknown verdict', 'finish', args({ verdict: 'maybe', summary: 's' }), /verdict/],
    ['a prototype key as tool', 'constructor', '{}', /unknown tool/],
  ])('rejects %s', (_what, tool, raw, reason) => {
    const decision = parseDecision(tool, raw, '');
    expect(decision.kind).toBe('invalid');
    expect(decision).toMatchObject({ reason: expect.stringMatching(reason) });
  });
});

describe('tool definitions', () => {
  const defs = agenticToolDefinitions();
  const shapeOf = (schema: z.ZodTypeAny): z.ZodRawShape =>
    schema instanceof z.ZodEffects ? shapeOf(schema.innerType()) : (schema as z.AnyZodObject).shape;

  it('offers the read, action and finish tools, never HttpRequest or RunScript', () => {
    expect(defs.map((d) => d.function.name)).toEqual([
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
    // The target is the incident's: no argument names a namespace, cluster or Deployment.
    const argNames = defs.flatMap((d) => Object.keys((d.function.parameters as { properties: object }).properties));
    expect(argNames).not.toEqual(expect.arrayContaining([expect.stringMatching(/namespace|cluster|deployment/i)]));
  });

  it('describes exactly the arguments the zod schemas accept', () => {
    for (const name of AGENTIC_TOOL_NAMES) {
      const params = defs.find((d) => d.function.name === name)!.function.parameters as {
        properties: Record<string, { enum?: string[] }>;
        required: string[];
        additionalProperties: boolean;
      };
      const shape = shapeOf(agenticToolArgs[name]);
      expect([name, Object.keys(params.properties).sort()]).toEqual([name, Object.keys(shape).sort()]);
      const required = Object.keys(shape).filter((k) => !shape[k].isOptional());
      expect([name, [...params.required].sort()]).toEqual([name, required.sort()]);
      expect(params.additionalProperties).toBe(false);
      for (const [key, prop] of Object.entries(params.properties))
        if (prop.enum) expect([name, key, prop.enum]).toEqual([name, key, (shape[key] as z.ZodEnum<[string]>).options]);
    }
  });
});

describe('agenticMessages', () => {
  const input: AgenticDecideInput = {
    incident,
    insight: { rootCause: 'memory limit too low', analysis: 'heap grows', recommendations: ['raise to 1Gi'] },
    steps: [
      {
        step: 1,
        reasoning: 'See the pods.',
        tool: 'list_pods',
        params: {},
        observation: '{"pods":[{"name":"api-1","restarts":4}]}',
      },
      {
        step: 2,
        reasoning: 'Raise memory.',
        tool: 'AdjustResources',
        params: { container: 'app', memoryLimit: '1Gi' },
        observation: 'done',
      },
    ],
    stepNumber: 3,
    maxSteps: 10,
  };

  it('gives the incident and insight, then each step as a tool call and its observation', () => {
    const messages = agenticMessages(input);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'user']);
    expect(messages[0].content).toMatch(/remediation agent.*at most 10 steps/);
    expect(messages[1].content).toContain('Incident INC-20261123-001: OOMKilled (severity high) on Deployment/api');
    expect(messages[1].content).toContain('namespace shop, cluster prod');
    expect(messages[1].content).toContain('root cause: memory limit too low');
    expect(messages[1].content).toContain('- raise to 1Gi');
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: 'See the pods.',
      tool_calls: [{ id: 'step-1', type: 'function', function: { name: 'list_pods', arguments: '{}' } }],
    });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'step-1', content: input.steps[0].observation });
    // An action recorded by its type is replayed as the tool the model called.
    expect(messages[4]).toMatchObject({
      tool_calls: [{ function: { name: 'adjust_resources', arguments: '{"container":"app","memoryLimit":"1Gi"}' } }],
    });
    expect(messages[6].content).toBe('Step 3 of 10: call the next tool.');
  });

  it('says when there is no insight, and when a step is the last', () => {
    const messages = agenticMessages({ ...input, insight: null, steps: [], stepNumber: 10 });
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(messages[1].content).toContain('No AI insight is available.');
    expect(messages[2].content).toBe('Step 10 of 10 (the last one): call the next tool.');
  });

  it('keeps secrets out of what the model reads', () => {
    const messages = agenticMessages({
      ...input,
      incident: { ...incident, description: 'curl -H "Authorization: Bearer abc.def.ghi" failed' },
      steps: [{ ...input.steps[0], observation: 'env: API_KEY=sk-live-0123456789abcdefXYZ' }],
    });
    expect(JSON.stringify(messages)).not.toMatch(/abc\.def\.ghi|sk-live/);
  });
});

describe('clipObservation', () => {
  it('keeps short text, writes objects as JSON and clips at the limit', () => {
    expect(clipObservation('ready 3/3')).toBe('ready 3/3');
    expect(clipObservation({ ready: 3, pods: ['a'] })).toBe('{"ready":3,"pods":["a"]}');
    expect(clipObservation(undefined)).toBe('');
    const clipped = clipObservation('x'.repeat(5000));
    expect(clipped).toHaveLength(4000);
    expect(clipped.endsWith('…')).toBe(true);
    expect(clipObservation('abcdef', 4)).toBe('abc…');
  });

  it('survives a cycle and hides secrets', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(clipObservation(cyclic)).toBe('[object Object]');
    expect(clipObservation({ token: 'fh_abcdefghijklmnopqrstuvwxyz' })).not.toContain('fh_abc');
  });
});

describe('activity options', () => {
  it('never retries what a retry cannot fix', () => {
    expect(AGENTIC_ACTIVITY_OPTIONS.retry.nonRetryableErrorTypes).toEqual(
      expect.arrayContaining([AGENTIC_INVALID, AGENTIC_UNAVAILABLE]),
    );
    expect(AGENTIC_ACTIVITY_OPTIONS.heartbeatTimeout).toBeDefined();
  });
});
