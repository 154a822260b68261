import { getChatMessage } from '../../store/chat';
import { CallbackDelivery } from '../../store/models';
import { useGateway } from '../harness/gateway';

/** A gateway and worker deployment without FOGHORN_WEBHOOK_CALLBACK_URL. */
describe('gateway without a callback URL', () => {
  let silent: Awaited<ReturnType<typeof useGateway>>;
  beforeAll(async () => {
    silent = await useGateway({ env: { FOGHORN_WEBHOOK_CALLBACK_URL: '' } });
  });
  afterAll(() => silent.stop());

  it('runs turns and records replies when no callback URL is configured', async () => {
    const id = await silent.send({ chat_id: 'd-none', text: '/help' });
    const done = await silent.eventually(
      () => getChatMessage(id),
      (m) => m?.status === 'done',
    );
    expect(done!.replyKind).toBe('final');
    const record = await CallbackDelivery.findOne({ messageId: id }).lean();
    expect(record).toMatchObject({ status: 'recorded', kind: 'final', attempts: 0 });
    expect(silent.receiver.attempts).toHaveLength(0);
  });
});
