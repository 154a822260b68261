import { MockActivityEnvironment } from '@temporalio/testing';
import { mkdtemp, realpath, rm } from 'fs/promises';
import { tmpdir } from 'os';
import path from 'path';
import { createAgentToolActivities } from '../../activities/agent-tools';
import { toolDefinitions } from '../../contracts/agent-tools';
import type { ToolCall, ToolCaller, ToolResult } from '../../domain/agent-tools';
import { parseConfig } from '../../config/env';
import { saveChatMessage } from '../../store/chat';
import { useStack } from '../harness/stack';

/**
 * The chat agent's tools against the real stack: incident actions go through the incident
 * workflows on the time-skipping server and must leave the same traces as the API's.
 */
describe('agent tools', () => {
  let s: Awaited<ReturnType<typeof useStack>>;
  let shellDir: string;
  beforeAll(async () => {
    s = await useStack();
    shellDir = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-agent-shell-')));
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    if (shellDir) await rm(shellDir, { recursive: true, force: true });
  });

  const alice: ToolCaller = { chatId: 'ops-room', userId: 'alice', messageId: 'msg-1' };
  const config = (env: Record<string, string> = {}) =>
    parseConfig({
      FOGHORN_WEBHOOK_ADDR: ':8085',
      FOGHORN_WEBHOOK_SECRET: 'a-long-random-secret',
      FOGHORN_WEBHOOK_CALLBACK_URL: 'https://chat.example.com/foghorn/replies',
      FOGHORN_AGENT_SHELL_DIR: path.join(shellDir, 'work'),
      ...env,
    });
  let activityIds = 0;
  /** One activity execution; pass `activityId` to replay the same execution (a retry). */
  const tool = (
    call: ToolCall,
    opts: { env?: Record<string, string>; caller?: ToolCaller; activityId?: string } = {},
  ): Promise<ToolResult> => {
    const { runAgentTool } = createAgentToolActivities({
      config: config(opts.env),
      client: s.client,
      taskQueue: s.wf.taskQueue,
    });
    const env = new MockActivityEnvironment({ activityId: opts.activityId ?? `tool-${++activityIds}` });
    return env.run(runAgentTool, { caller: opts.caller ?? alice, call });
  };
  const get = (p: string) => s.call('GET', p, { token: s.tokens.operator });

  async function escalatedIncident(app: string): Promise<string> {
    const created = await s.call('POST', '/incidents', {
      token: s.tokens.operator,
      body: {
        resource: `Deployment/${app}`,
        namespace: 'shop',
        signalType: 'OOMKilled',
        severity: 'high',
        description: 'container api was OOMKilled (exit code 137)',
        labels: { app },
      },
    });
    expect(created.status).toBe(201);
    const name: string = created.body.metadata.name;
    await s.eventually(
      () => get(`/incidents/${name}`),
      // Escalated, and its ladder's L1 notice written (nothing is configured: it says so).
      (r) => r.body.status?.state === 'Escalated' && r.body.status.timelineCount === 6,
    );
    return name;
  }

  it('lists open incidents and shows one in detail', async () => {
    const name = await escalatedIncident('checkout');

    const list = await tool({ tool: 'list_incidents', args: {} });
    expect(list.error).toBeUndefined();
    expect(list.text).toMatch(/^1 open incident:\n/);
    expect(list.text).toContain(`${name}  Escalated  high  shop/Deployment/checkout  age `);
    expect((await tool({ tool: 'list_incidents', args: { state: 'Escalated' } })).text).toContain(name);
    expect((await tool({ tool: 'list_incidents', args: { state: 'Resolved' } })).text).toBe('No Resolved incidents.');

    const show = await tool({ tool: 'show_incident', args: { name } });
    expect(show.text).toContain(`${name}: OOMKilled on Deployment/checkout in shop`);
    expect(show.text).toContain('state: Escalated  severity: high  risk: 65');
    expect(show.text).toMatch(/root cause: .*checkout/);
    expect(show.text).toMatch(/latest events \(5 of 6\):\n {2}\S+ Analysis \(ai-engine\)/);
    expect(show.text).toMatch(/\n {2}\S+ Notification \(notifier\): No notification channel is configured/);
  });

  it('acknowledges, snoozes and resolves as webhook:<user>, leaving the API’s traces', async () => {
    const name = await escalatedIncident('cart');

    const ack = await tool({ tool: 'acknowledge_incident', args: { name, message: 'on it' } });
    expect(ack).toEqual({ text: `Acknowledged ${name} (Escalated): escalation paused.` });
    // The API sees who acknowledged: its 409 names them.
    const apiAgain = await s.call('POST', `/incidents/${name}/acknowledge`, {
      token: s.tokens.operator,
      body: { acknowledgedBy: 'bob' },
    });
    expect(apiAgain.status).toBe(409);
    expect(apiAgain.body.error.details).toMatch(/^acknowledged by webhook:alice at /);
    const audit = await get(`/audit?resource=${name}&action=incident.acknowledge`);
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({
      user: 'webhook:alice',
      role: 'operator',
      sourceIP: 'webhook',
      userAgent: 'foghorn-gateway',
      resourceType: 'Incident',
      namespace: 'shop',
      details: { message: 'on it' },
    });

    const again = await tool({ tool: 'acknowledge_incident', args: { name } });
    expect(again.error).toBe(true);
    expect(again.text).toMatch(/^Incident already acknowledged: acknowledged by webhook:alice at \d{4}-/);

    for (const duration of ['5x', '25h', '0s']) {
      const bad = await tool({ tool: 'snooze_incident', args: { name, duration } });
      expect(bad.error).toBe(true);
      expect(bad.text).toMatch(/^Invalid duration: /);
    }
    const snooze = await tool({ tool: 'snooze_incident', args: { name, duration: '2h30m', reason: 'deploy window' } });
    expect(snooze.text).toMatch(new RegExp(`^Snoozed ${name} for 2h30m0s: notifications muted until \\d{4}-`));
    const detail = await get(`/incidents/${name}`);
    expect(detail.body.status).toMatchObject({ acknowledged: true, snoozed: true });

    expect((await tool({ tool: 'show_postmortem', args: { name } })).text).toBe(
      `${name} has no postmortem yet: it is written when the incident is resolved (now Escalated).`,
    );

    const resolved = await tool({ tool: 'resolve_incident', args: { name } }, { caller: { ...alice, userId: 'bob' } });
    expect(resolved.text).toBe(
      `Resolved ${name}: Manually resolved via dashboard. The postmortem is being written (/postmortem ${name}).`,
    );
    const after = await get(`/incidents/${name}`);
    expect(after.body.status).toMatchObject({ state: 'Resolved', resolution: 'Manually resolved via dashboard' });
    const twice = await tool({ tool: 'resolve_incident', args: { name, resolution: 'again' } });
    expect(twice).toEqual({
      error: true,
      text: expect.stringMatching(/^Incident already resolved: resolved by webhook:bob at /),
    });

    const actions = (await get(`/audit?resource=${name}`)).body.items.map((r: { action: string; user: string }) => [
      r.action,
      r.user,
    ]);
    expect(actions).toEqual([
      ['incident.resolve', 'webhook:bob'],
      ['incident.snooze', 'webhook:alice'],
      ['incident.acknowledge', 'webhook:alice'],
      ['incident.create', 'operator-user'],
    ]);

    const byIncident = await s.eventually(
      () => tool({ tool: 'show_postmortem', args: { name } }),
      (r) => r.text.startsWith('PM-'),
    );
    expect(byIncident.text).toMatch(new RegExp(`^PM-\\d{8}-\\d{3,} \\(Open\\) for ${name}: `));
    const pmName = byIncident.text.split(' ')[0]!;
    expect((await tool({ tool: 'show_postmortem', args: { name: pmName.toLowerCase() } })).text).toBe(byIncident.text);
  });

  it('answers unknown names, bad arguments and unknown tools with the reason', async () => {
    expect(await tool({ tool: 'show_incident', args: { name: 'INC-20990101-999' } })).toEqual({
      error: true,
      text: 'Incident not found: incident INC-20990101-999 does not exist',
    });
    expect(await tool({ tool: 'acknowledge_incident', args: { name: 'INC-20990101-999' } })).toMatchObject({
      error: true,
      text: expect.stringMatching(/^Incident not found/),
    });
    expect(await tool({ tool: 'show_postmortem', args: { name: 'PM-20990101-999' } })).toEqual({
      error: true,
      text: 'PostMortem not found: PostMortem PM-20990101-999 does not exist',
    });
    expect(await tool({ tool: 'show_incident', args: {} })).toEqual({
      error: true,
      text: 'Invalid arguments for show_incident: args.name: Required',
    });
    expect(await tool({ tool: 'list_incidents', args: { state: 'open' } })).toMatchObject({
      error: true,
      text: expect.stringMatching(/^Invalid arguments for list_incidents: args.state: Invalid enum value/),
    });
    expect(await tool({ tool: 'delete_everything' as never, args: {} })).toMatchObject({
      error: true,
      text: expect.stringMatching(/^Unknown tool delete_everything: use one of list_incidents, /),
    });
  });

  it('refuses actions to a viewer gateway, and still lets it read', async () => {
    const name = await escalatedIncident('search');
    const viewer = { env: { FOGHORN_GATEWAY_ROLE: 'viewer' } };
    expect(await tool({ tool: 'acknowledge_incident', args: { name } }, viewer)).toEqual({
      error: true,
      text: 'Forbidden: the gateway role viewer may not acknowledge incidents',
    });
    expect((await tool({ tool: 'snooze_incident', args: { name, duration: '1h' } }, viewer)).text).toBe(
      'Forbidden: the gateway role viewer may not snooze incidents',
    );
    expect((await tool({ tool: 'resolve_incident', args: { name } }, viewer)).text).toBe(
      'Forbidden: the gateway role viewer may not resolve incidents',
    );
    expect((await tool({ tool: 'run_shell', args: { command: 'echo hi' } }, viewer)).text).toBe(
      'Forbidden: the gateway role viewer may not run shell commands',
    );
    expect((await tool({ tool: 'show_incident', args: { name } }, viewer)).error).toBeUndefined();
    expect((await get(`/incidents/${name}`)).body.status).toMatchObject({ state: 'Escalated', acknowledged: false });
  });

  it('runs shell commands in the shell directory, audited once per execution, without secrets', async () => {
    process.env.FOGHORN_TEST_API_KEY = 'do-not-leak';
    try {
      const call: ToolCall = { tool: 'run_shell', args: { command: 'pwd; echo "[$FOGHORN_TEST_API_KEY]"; exit 2' } };
      const first = await tool(call, { activityId: 'shell-1' });
      expect(first).toEqual({
        text: `$ pwd; echo "[$FOGHORN_TEST_API_KEY]"; exit 2\n\`\`\`\n${shellDir}/work\n[]\n\`\`\`\nexit code 2`,
      });
      await tool(call, { activityId: 'shell-1' }); // a retry of the same execution
      const audit = await get('/audit?action=agent.shell');
      expect(audit.body.items).toHaveLength(1);
      expect(audit.body.items[0]).toMatchObject({
        user: 'webhook:alice',
        role: 'operator',
        resource: 'ops-room',
        resourceType: 'Chat',
        sourceIP: 'webhook',
        userAgent: 'foghorn-gateway',
        details: { command: call.args.command, exitCode: 2, timedOut: false, messageId: 'msg-1' },
      });
    } finally {
      delete process.env.FOGHORN_TEST_API_KEY;
    }

    const slow = await tool(
      { tool: 'run_shell', args: { command: 'sleep 30' } },
      { env: { FOGHORN_AGENT_SHELL_TIMEOUT: '300ms' }, caller: { chatId: 'ops-room', messageId: 'msg-2' } },
    );
    expect(slow.text).toMatch(/timed out and was killed \(SIGKILL\)$/);
    const latest = (await get('/audit?action=agent.shell')).body.items[0];
    expect(latest).toMatchObject({ user: 'webhook:ops-room', details: { exitCode: null, timedOut: true } });
  });

  it('refuses the shell when it is off, and leaves it out of the tool definitions', async () => {
    const before = (await get('/audit?action=agent.shell')).body.metadata.totalCount;
    expect(
      await tool({ tool: 'run_shell', args: { command: 'touch x' } }, { env: { FOGHORN_AGENT_SHELL: 'off' } }),
    ).toEqual({ error: true, text: 'The shell tool is disabled (FOGHORN_AGENT_SHELL=off).' });
    expect((await get('/audit?action=agent.shell')).body.metadata.totalCount).toBe(before);

    const on = toolDefinitions({ FOGHORN_AGENT_SHELL: 'on' });
    expect(on.map((d) => d.function.name)).toContain('run_shell');
    expect(toolDefinitions({ FOGHORN_AGENT_SHELL: 'off' }).map((d) => d.function.name)).toEqual(
      on.map((d) => d.function.name).filter((n) => n !== 'run_shell'),
    );
    expect(on.find((d) => d.function.name === 'snooze_incident')).toEqual({
      type: 'function',
      function: {
        name: 'snooze_incident',
        description: expect.stringContaining('Go duration'),
        parameters: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1 },
            duration: { type: 'string', minLength: 1 },
            reason: { type: 'string' },
          },
          required: ['name', 'duration'],
          additionalProperties: false,
        },
      },
    });
    expect(on.find((d) => d.function.name === 'list_incidents')?.function.parameters).toMatchObject({
      properties: { state: { type: 'string', enum: expect.arrayContaining(['Escalated']) } },
    });
  });

  it('reports the gateway adapters with the live queue depth', async () => {
    await saveChatMessage({ messageId: 'queued-1', chatId: 'ops-room', text: 'hi' });
    await saveChatMessage({ messageId: 'queued-2', chatId: 'ops-room', text: 'there' });
    const status = await tool({ tool: 'gateway_status', args: {} });
    expect(status.text.split('\n')).toEqual([
      'adapter: webhook',
      '  address:        0.0.0.0:8085',
      '  path:           /inbound',
      '  callback host:  chat.example.com',
      '  secret set:     yes',
      '  queue depth:    2',
      '  last delivery error: (none)',
    ]);
    const unsigned = await tool(
      { tool: 'gateway_status', args: {} },
      { env: { FOGHORN_WEBHOOK_SECRET: '', FOGHORN_WEBHOOK_PATH: '/chat' } },
    );
    expect(unsigned.text).toContain('  path:           /chat');
    expect(unsigned.text).toContain('  secret set:     no');
  });
});
