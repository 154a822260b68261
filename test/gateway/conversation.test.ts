import { HELP_TEXT } from '../../domain/chatops';
import { getChatMessage } from '../../store/chat';
import { useGateway } from '../harness/gateway';

describe('gateway conversation with the built-in ChatOps agent', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    gw = await useGateway();
  });
  afterAll(() => gw.stop());

  it('answers /help with a signed final callback carrying message_id, kind and seq', async () => {
    const id = await gw.send({ chat_id: 'c-help', user_id: 'alice', text: '/help' });
    const reply = await gw.reply(id);
    expect(reply.body).toEqual({ chat_id: 'c-help', text: HELP_TEXT, message_id: id, kind: 'final', seq: 1 });
    expect(reply.signatureValid).toBe(true);
    expect(reply.headers['x-foghorn-secret']).toBe(gw.config.FOGHORN_WEBHOOK_SECRET);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['webhook-id']).toBe(`${id}.1`);
    await gw.eventually(
      () => getChatMessage(id),
      (m) => m?.status === 'done',
    );
  });
});
