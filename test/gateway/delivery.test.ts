import { parseConfig } from '../../config/env';
import { createLogger } from '../../api/observability';
import { startGateway } from '../../gateway/gateway';
import { CallbackDelivery } from '../../store/models';
import { useGateway } from '../harness/gateway';

describe('callback delivery', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    gw = await useGateway();
  });
  afterAll(() => gw.stop());
  afterEach(() => gw.receiver.answerWith(() => ({ status: 200 })));

  it('retries a final reply honouring Retry-After, and holds the chat’s next reply until it is delivered', async () => {
    // The first reply of this chat is refused twice (503, Retry-After: 2) before it is taken.
    const chatFirst: { id?: string } = {};
    gw.receiver.answerWith((body, attempt) => {
      if (body.chat_id === 'd-order' && body.kind === 'final') chatFirst.id ??= body.message_id;
      return body.message_id === chatFirst.id && body.kind === 'final' && attempt <= 2
        ? { status: 503, headers: { 'Retry-After': '2' } }
        : { status: 200 };
    });
    const first = await gw.send({ chat_id: 'd-order', text: '/help' });
    const second = await gw.send({ chat_id: 'd-order', text: '/incidents' });
    const third = await gw.send({ chat_id: 'd-order', text: '/gateway status' });
    await gw.reply(third, 45_000);

    expect(chatFirst.id).toBe(first);
    const tries = gw.receiver.attempts.filter((a) => a.body.message_id === first);
    expect(tries.map((a) => a.status)).toEqual([503, 503, 200]);
    for (let i = 1; i < tries.length; i++) expect(tries[i]!.at - tries[i - 1]!.at).toBeGreaterThanOrEqual(1_900);
    expect(new Set(tries.map((a) => a.headers['webhook-id']))).toEqual(new Set([`${first}.1`])); // same id: receivers dedupe
    // Everything of the chat arrived in order: first's final (after its retries), then second, then third.
    const chat = gw.receiver.delivered().filter((c) => c.body.chat_id === 'd-order');
    expect(chat.map((c) => c.body.message_id)).toEqual([first, second, third]);

    const record = await CallbackDelivery.findOne({ webhookId: `${first}.1` }).lean();
    expect(record).toMatchObject({ status: 'delivered', attempts: 3, lastError: expect.stringContaining('HTTP 503') });
  });

  it('keeps retrying while the receiver is unreachable, then delivers', async () => {
    let refused = 0;
    gw.receiver.answerWith((body) => (body.chat_id === 'd-down' && ++refused <= 3 ? { status: 500 } : { status: 200 }));
    const id = await gw.send({ chat_id: 'd-down', text: '/help' });
    const reply = await gw.reply(id, 45_000);
    expect(reply.body.kind).toBe('final');
    expect(refused).toBe(4);
  });

  it('gives up on a notice after a few tries but still delivers the final after it', async () => {
    gw.receiver.answerWith((body) => (body.kind === 'notice' ? { status: 500 } : { status: 200 }));
    const id = await gw.send({ chat_id: 'd-notice', text: '/sh sleep 2.5; echo late' });
    const reply = await gw.reply(id, 45_000);
    expect(reply.body).toMatchObject({ kind: 'final', seq: 2 });
    const notices = gw.receiver.attempts.filter((a) => a.body.message_id === id && a.body.kind === 'notice');
    expect(notices.map((a) => a.status)).toEqual([500, 500, 500]);
    expect(Math.max(...notices.map((a) => a.at))).toBeLessThan(reply.at); // order held
  });

  it('shows the last delivery error in gateway status', async () => {
    const reply = await gw.reply(await gw.send({ chat_id: 'd-status', text: '/gateway status' }));
    expect(reply.body.text).toMatch(/last delivery error: \d{4}-\d\d-\d\dT\S+ HTTP 500 from 127\.0\.0\.1:\d+/);
  });

  it('warns at start when the secret or the callback URL is unset', async () => {
    const lines: string[] = [];
    const logger = createLogger('warn');
    const spy = jest.spyOn(logger, 'warn').mockImplementation((msg: unknown) => void lines.push(String(msg)));
    const config = parseConfig({ FOGHORN_WEBHOOK_ADDR: '127.0.0.1:0', FOGHORN_TASK_QUEUE: gw.wf.taskQueue });
    const bare = await startGateway(config, gw.client, logger);
    await bare.stop();
    spy.mockRestore();
    expect(lines).toEqual([
      'FOGHORN_WEBHOOK_SECRET is not set: every request to the webhook is refused with 401',
      'FOGHORN_WEBHOOK_CALLBACK_URL is not set: messages are accepted and run, but replies are only recorded, not sent',
    ]);
  });
});
