import { getChatMessage } from '../../store/chat';
import { chatWorkflow } from '../../workflows/chat';
import { chatStateQuery, chatWorkflowId } from '../../workflows/chat-messages';
import { useGateway } from '../harness/gateway';
import { useLlmServer, type LlmRequestBody } from '../harness/llm-server';

const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** The scripted model: what the latest user message asks decides the answer. */
function model(body: LlmRequestBody) {
  const last = body.messages.at(-1)!;
  const userText = String(
    [...body.messages]
      .reverse()
      .find((m) => m.role === 'user')
      ?.content?.toString() ?? '',
  );
  const toolSteps = body.messages.filter((m) => m.role === 'tool').length;
  if (userText.includes('list please')) {
    if (last.role === 'tool') return { content: `Here you go: ${last.content}` };
    return { content: '', toolCalls: [{ name: 'list_incidents', args: {} }] };
  }
  if (userText.includes('three steps')) {
    if (toolSteps < 3) return { content: '', toolCalls: [{ name: 'gateway_status', args: {} }] };
    return { content: 'checked three times' };
  }
  const exact = /exactly (\d+)/.exec(userText);
  if (exact) return { content: 'x'.repeat(Number(exact[1])) };
  if (userText.includes('fail please')) return { status: 500, content: 'model overloaded' };
  if (userText.includes('announce')) return { content: 'Deployed.\n@send webhook Deploy finished' };
  return { content: `echo: ${userText}` };
}

describe('gateway with the LLM agent (OpenAI-compatible tool calling)', () => {
  let llm: Awaited<ReturnType<typeof useLlmServer>>;
  let gw: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    llm = await useLlmServer((body) => model(body));
    gw = await useGateway({
      env: {
        FOGHORN_LLM_BASE_URL: llm.baseUrl,
        FOGHORN_LLM_MODEL: 'test-model',
        FOGHORN_WEBHOOK_HOME_CHANNEL: 'ops-home',
      },
    });
  });
  afterAll(async () => {
    await gw.stop();
    await llm.stop();
  });

  const lastRequestFor = (needle: string) =>
    [...llm.requests].reverse().find((r) => JSON.stringify(r.body.messages).includes(needle))!.body;

  it('runs the tool loop: the model calls a tool, sees its result, answers', async () => {
    const id = await gw.send({ chat_id: 'l-tools', user_id: 'alice', text: 'list please' });
    const reply = await gw.reply(id);
    expect(reply.body).toMatchObject({ kind: 'final', text: 'Here you go: No open incidents.' });
    const body = lastRequestFor('list please');
    expect(body.model).toBe('test-model');
    expect(body.tools!.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(['list_incidents', 'acknowledge_incident', 'mttr_summary', 'run_shell']),
    );
    expect(body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'No open incidents.' });
    expect(body.messages.at(-2)).toMatchObject({ role: 'assistant' });
  });

  it('gives the model the last turns of the chat, with who said what', async () => {
    await gw.reply(await gw.send({ chat_id: 'l-ctx', user_id: 'alice', text: 'first thing' }));
    await gw.reply(await gw.send({ chat_id: 'l-ctx', user_id: 'bob', text: 'second thing' }));
    const body = lastRequestFor('second thing');
    expect(body.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', expect.stringContaining("Foghorn's ChatOps agent")],
      ['user', '[alice] first thing'],
      ['assistant', 'echo: [alice] first thing'],
      ['user', '[bob] second thing'],
    ]);
  });

  it('passes an inbound image to the model as vision input', async () => {
    await gw.reply(
      await gw.send({ chat_id: 'l-img', text: 'what is this graph', image_b64: TINY_PNG, image_mime: 'image/png' }),
    );
    const body = lastRequestFor('what is this graph');
    expect(body.messages.at(-1)!.content).toEqual([
      { type: 'text', text: 'what is this graph' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${TINY_PNG}` } },
    ]);
  });

  it('keeps a reply of exactly 3500 characters and cuts a longer one to 3499 + …', async () => {
    const exact = await gw.reply(await gw.send({ chat_id: 'l-len', text: 'exactly 3500' }));
    expect(exact.body.text).toBe('x'.repeat(3500));
    const over = await gw.reply(await gw.send({ chat_id: 'l-len', text: 'exactly 3501' }));
    expect(Array.from(over.body.text)).toHaveLength(3500);
    expect(over.body.text).toBe('x'.repeat(3499) + '…');
    const stored = await gw.eventually(
      () => getChatMessage(over.body.message_id),
      (m) => m?.status === 'done',
    );
    expect(stored!.reply).toBe('x'.repeat(3501)); // the record keeps the whole answer
  });

  it('sends @send webhook lines as proactive messages to the home channel', async () => {
    const id = await gw.send({ chat_id: 'l-send', text: 'announce the deploy' });
    const reply = await gw.reply(id);
    expect(reply.body.text).toBe('Deployed.');
    const proactive = gw.receiver.of(id).filter((c) => c.body.kind === 'proactive');
    expect(proactive.map((c) => c.body)).toEqual([
      { chat_id: 'ops-home', text: 'Deploy finished', message_id: id, kind: 'proactive', seq: 1 },
    ]);
    expect(proactive[0]!.signatureValid).toBe(true);
    expect(reply.body.seq).toBe(2); // the proactive message went first, the reply is last
  });

  it('notifies the home channel when an incident escalates, and notes it on the timeline', async () => {
    const created = await gw.call('POST', '/incidents', {
      token: gw.tokens.operator,
      body: { resource: 'Deployment/payments', namespace: 'prod', signalType: 'HighErrorRate', severity: 'critical' },
    });
    const name = created.body.metadata.name as string;
    // The built-in escalation policy: L1 is the chat home channel.
    const notice = await gw.receiver.waitFor((c) => c.body.text.startsWith(`${name} escalated to on-call (L1)`));
    expect(notice.body).toMatchObject({ chat_id: 'ops-home', kind: 'proactive', seq: 1 });
    expect(notice.body.text).toContain('critical HighErrorRate on prod/Deployment/payments');
    expect(notice.body.text).toContain(`Reply /ack ${name} to acknowledge.`);
    expect(notice.signatureValid).toBe(true);
    const timeline = await gw.eventually(
      () => gw.call('GET', `/incidents/${name}/timeline?namespace=prod`),
      (r) => JSON.stringify(r.body).includes('"Notification"'),
    );
    const note = timeline.body.events.find((e: { type: string }) => e.type === 'Notification');
    expect(note).toMatchObject({
      source: 'notifier',
      message: expect.stringContaining('Notified L1 via chat ops-home'),
      details: { channel: 'chat', target: 'ops-home', level: 1, attempt: 1 },
    });
  });

  it('posts progress while tools run, at most one per 3 s, after the notice', async () => {
    llm.hold();
    const id = await gw.send({ chat_id: 'l-progress', text: 'three steps' });
    // Each model step waits 1.5 s, so the turn takes about 6 s with three tool calls.
    const timer = setInterval(() => {
      llm.release();
      llm.hold();
    }, 1_500);
    try {
      const reply = await gw.reply(id, 45_000);
      expect(reply.body.text).toBe('checked three times');
    } finally {
      clearInterval(timer);
      llm.release();
    }
    const got = gw.receiver.of(id);
    expect(got[0]!.body.kind).toBe('notice');
    expect(got.at(-1)!.body.kind).toBe('final');
    const progress = got.filter((c) => c.body.kind === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(2);
    expect(progress[0]!.body.text).toBe('Running gateway_status…');
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.at - progress[i - 1]!.at).toBeGreaterThanOrEqual(2_500);
    expect(got.map((c) => c.body.seq)).toEqual(got.map((_, i) => i + 1));
  });

  it('continues the chat workflow as new and keeps the context across runs', async () => {
    const chatId = 'l-can';
    const handle = await gw.client.workflow.start(chatWorkflow, {
      workflowId: chatWorkflowId(chatId),
      taskQueue: gw.wf.taskQueue,
      args: [{ chatId, turnsPerRun: 2 }],
    });
    for (const text of ['one', 'two', 'three']) await gw.reply(await gw.send({ chat_id: chatId, text }));
    const body = lastRequestFor('three');
    expect(body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two', 'three']);
    const latest = await gw.client.workflow.getHandle(chatWorkflowId(chatId)).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId); // continued as new after two turns
    expect(latest.status.name).toBe('RUNNING');
    // The new run counts its own turns; nothing is left queued. The turn posts its final callback
    // before it records the turn and completes, so right after the reply the chat may still show
    // it as current: the state settles once the child workflow has completed.
    const state = await gw.eventually(
      () => gw.client.workflow.getHandle(chatWorkflowId(chatId)).query(chatStateQuery),
      (s) => s.current === undefined,
    );
    expect(state).toEqual({ queued: 0, turns: 1 });
  });

  it('answers with an error callback when the model keeps failing', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'l-fail', text: 'fail please' }), 45_000);
    expect(reply.body.kind).toBe('error');
    expect(reply.body.text).toMatch(/^Sorry, that failed: .*model overloaded/);
  });
});
