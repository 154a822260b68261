import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'crypto';
import type { AddressInfo } from 'net';
import pino from 'pino';
import { createGatewayApp, listen } from '../../gateway/server';
import { handOverLateMessages, LateHandOverError } from '../../operations/chat-dispatch';
import { getChatMessage, saveChatMessage } from '../../store/chat';
import { ChatMessage } from '../../store/models/chat-message';
import { chatStateQuery, chatWorkflowId } from '../../workflows/chat-messages';
import { GATEWAY_SECRET, useGateway } from '../harness/gateway';
import { firstSignalled, signalledBatches } from './chat-signals';

/**
 * Per-chat order under late hand-overs (issue 8): a message stored but not handed over to
 * Temporal — because the gateway that accepted it died right after storing, or Temporal was
 * unreachable for it — must still be answered before every later message of its chat, and every
 * message exactly once.
 */
describe('gateway: per-chat order holds when hand-overs are late', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  /** A second gateway whose Temporal connection is closed: it stores and answers 202, never hands over. */
  let cutOff: { url: string; close(): Promise<void> };
  let closedConnection: Connection;
  let offline: Client;
  beforeAll(async () => {
    gw = await useGateway();
    closedConnection = await Connection.connect({ address: gw.wf.env.address });
    await closedConnection.close();
    offline = new Client({ connection: closedConnection, namespace: gw.wf.env.namespace ?? 'default' });
    const app = createGatewayApp(gw.config, { client: offline, taskQueue: gw.wf.taskQueue }, pino({ level: 'silent' }));
    const server = await listen(app.app, '127.0.0.1', 0);
    cutOff = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${gw.config.FOGHORN_WEBHOOK_PATH}`,
      close: async () => {
        app.beginShutdown();
        await new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        });
        await app.drain();
      },
    };
  });
  afterAll(async () => {
    await cutOff.close();
    await gw.stop();
  });

  /** As if the accepting gateway died right after storing: stored exactly as the gateway stores it, never handed over. */
  const storedOnly = async (chatId: string, text: string): Promise<string> => {
    const messageId = `msg-${randomUUID()}`;
    await saveChatMessage({ messageId, chatId, text });
    return messageId;
  };
  /** Accepted (202) by a gateway that cannot reach Temporal. */
  const viaCutOff = async (chatId: string, text: string): Promise<string> => {
    const res = await fetch(cutOff.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-foghorn-secret': GATEWAY_SECRET },
      body: JSON.stringify({ chat_id: chatId, text }),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { message_id: string }).message_id;
    expect(await getChatMessage(id)).toMatchObject({ status: 'accepted' }); // not handed over
    return id;
  };
  const live = (chatId: string, text: string) => gw.send({ chat_id: chatId, text });

  const isReply = (kind: string) => kind === 'final' || kind === 'error';
  /** Message ids of a chat's replies, in the order the receiver got them. */
  const repliesOf = (chatId: string) =>
    gw.receiver
      .delivered()
      .filter((c) => c.body.chat_id === chatId && isReply(c.body.kind))
      .map((c) => c.body.message_id);
  /** The chat's messages in acceptance order, as stored. */
  const acceptanceOrder = async (chatId: string) =>
    (await ChatMessage.find({ chatId }).sort({ acceptedAt: 1, _id: 1 }).lean()).map((m) => m.messageId);

  /** Waits for a reply to every message, then for the chat workflows to go idle (nothing queued or running). */
  const allAnswered = async (ids: string[], chats: string[], timeoutMs = 90_000) => {
    for (const id of ids) await gw.reply(id, timeoutMs);
    for (const chatId of chats)
      await gw.eventually(
        () => gw.client.workflow.getHandle(chatWorkflowId(chatId)).query(chatStateQuery),
        (s) => s.queued === 0 && s.current === undefined,
      );
  };
  const expectEachAnsweredOnce = (ids: string[]) => {
    const replies = gw.receiver.delivered().filter((c) => isReply(c.body.kind) && ids.includes(c.body.message_id));
    expect(replies.map((c) => c.body.message_id).sort()).toEqual([...ids].sort());
  };

  it('a message stored by a gateway that died is answered before a later message of the chat', async () => {
    const chatId = 'o-died';
    const earlier = await storedOnly(chatId, '/help');
    const later = await live(chatId, '/gateway status');
    await allAnswered([earlier, later], [chatId]);
    expect(repliesOf(chatId)).toEqual([earlier, later]);
    expectEachAnsweredOnce([earlier, later]);
    // The later message's hand-over took the earlier one along (the sweeper waits 15 s).
    expect(await getChatMessage(earlier)).toMatchObject({ status: 'done' });
  });

  it('a message accepted while Temporal was unreachable for its gateway is answered first', async () => {
    const chatId = 'o-unreachable';
    const earlier = await viaCutOff(chatId, '/help');
    const later = await live(chatId, '/incidents');
    const last = await live(chatId, '/help');
    await allAnswered([earlier, later, last], [chatId]);
    expect(repliesOf(chatId)).toEqual([earlier, later, last]);
    expectEachAnsweredOnce([earlier, later, last]);
  });

  it('several chats, many messages interleaved, late and live: each chat in acceptance order, each message once', async () => {
    const chats = ['o-many-1', 'o-many-2', 'o-many-3', 'o-many-4'];
    // Per chat, which of its messages are late (d: stored by a gateway that died; u: accepted
    // while Temporal was unreachable) and which go through the live gateway (l). Chat 4 ends
    // with late messages: nobody later takes them along, the sweeper hands them over, in order.
    const patterns = ['dllulldl', 'llduldul', 'udlldlul', 'ldludldu'];
    const sent = new Map<string, string[]>(chats.map((c) => [c, []]));
    const send = { d: storedOnly, u: viaCutOff, l: live };
    for (let step = 0; step < patterns[0]!.length; step++) {
      // Interleaved: one message per chat per step; the live ones of a step are sent at once.
      await Promise.all(
        chats.map(async (chatId, i) => {
          const how = patterns[i]![step] as keyof typeof send;
          sent.get(chatId)!.push(await send[how](chatId, step % 2 ? '/help' : '/gateway status'));
        }),
      );
    }
    const all = [...sent.values()].flat();
    await allAnswered(all, chats);
    for (const chatId of chats) {
      expect(await acceptanceOrder(chatId)).toEqual(sent.get(chatId));
      expect({ chatId, replies: repliesOf(chatId) }).toEqual({ chatId, replies: sent.get(chatId) });
    }
    expectEachAnsweredOnce(all);
  }, 150_000);

  it('a burst of concurrent messages to one chat is answered in acceptance order', async () => {
    const chatId = 'o-burst';
    const late = [await storedOnly(chatId, '/help'), await viaCutOff(chatId, '/help')];
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => live(chatId, i % 2 ? '/help' : '/incidents')));
    const all = [...late, ...burst];
    await allAnswered(all, [chatId]);
    const order = await acceptanceOrder(chatId);
    expect(order.slice(0, 2)).toEqual(late);
    expect(repliesOf(chatId)).toEqual(order);
    expectEachAnsweredOnce(all);
  });

  it('concurrent bursts to several chats: each chat signalled and answered in acceptance order, each message once', async () => {
    const chats = ['o-conc-1', 'o-conc-2', 'o-conc-3', 'o-conc-4'];
    // A late message first in two of the chats: the first live hand-over takes it along.
    const late = [await storedOnly(chats[0]!, '/help'), await viaCutOff(chats[1]!, '/help')];
    // All at once, interleaved over the chats: 32 requests in flight.
    const live = await Promise.all(
      Array.from({ length: 32 }, (_, i) => gw.send({ chat_id: chats[i % 4], text: i % 3 ? '/help' : '/incidents' })),
    );
    const all = [...late, ...live];
    await allAnswered(all, chats);
    for (const chatId of chats) {
      const order = await acceptanceOrder(chatId);
      expect(order).toHaveLength(chatId === chats[0] || chatId === chats[1] ? 9 : 8);
      expect({ chatId, signalled: firstSignalled(await signalledBatches(gw.client, chatId)) }).toEqual({
        chatId,
        signalled: order,
      });
      expect({ chatId, replies: repliesOf(chatId) }).toEqual({ chatId, replies: order });
    }
    expect((await acceptanceOrder(chats[0]!))[0]).toBe(late[0]);
    expect((await acceptanceOrder(chats[1]!))[0]).toBe(late[1]);
    expectEachAnsweredOnce(all);
  }, 150_000);

  describe('handOverLateMessages (the sweeper, and the reconciler)', () => {
    // Only the calls made here hand messages over: the harness gateway and its sweeper are stopped.
    beforeAll(() => gw.stopGateway());
    afterAll(() => gw.restartGateway());

    it('hands over every late message, per chat in acceptance order, and counts them', async () => {
      const chats = ['o-late-1', 'o-late-2', 'o-late-3'];
      const sent = new Map<string, string[]>(chats.map((c) => [c, []]));
      for (let i = 0; i < 8; i++) {
        const chatId = chats[i % 3]!;
        sent.get(chatId)!.push(await (i % 2 ? viaCutOff : storedOnly)(chatId, '/help'));
      }
      const d = { client: gw.client, taskQueue: gw.wf.taskQueue };
      const cutoff = new Date(Date.now() + 1);

      expect(await handOverLateMessages(d, cutoff, () => true)).toBe(0); // told to stop at once
      expect(await handOverLateMessages(d, new Date(0))).toBe(0); // nothing accepted that early
      const all = [...sent.values()].flat();
      for (const id of all) expect(await getChatMessage(id)).toMatchObject({ status: 'accepted' });

      expect(await handOverLateMessages(d, cutoff)).toBe(8);
      expect(await handOverLateMessages(d, cutoff)).toBe(0); // idempotent
      await allAnswered(all, chats);
      for (const chatId of chats)
        expect({ chatId, replies: repliesOf(chatId) }).toEqual({ chatId, replies: sent.get(chatId) });
      expectEachAnsweredOnce(all);
    });

    it('when Temporal is unreachable: throws with the count, gives up after three chats, hands nothing over', async () => {
      const chats = ['o-fail-1', 'o-fail-2', 'o-fail-3', 'o-fail-4'];
      const sent = await Promise.all(chats.map((chatId) => storedOnly(chatId, '/help')));
      const cutoff = new Date(Date.now() + 1);
      const err: unknown = await handOverLateMessages({ client: offline, taskQueue: gw.wf.taskQueue }, cutoff).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LateHandOverError);
      expect(err).toMatchObject({ handedOver: 0, failedChats: expect.any(Array) });
      expect((err as LateHandOverError).failedChats).toHaveLength(3);
      for (const id of sent) expect(await getChatMessage(id)).toMatchObject({ status: 'accepted' });
      // Once Temporal answers, the next call hands all of them over.
      expect(await handOverLateMessages({ client: gw.client, taskQueue: gw.wf.taskQueue }, cutoff)).toBe(4);
      await allAnswered(sent, chats);
      expectEachAnsweredOnce(sent);
    });

    it('leaves messages accepted after the cut-off alone', async () => {
      const chatId = 'o-late-cut';
      const before = await storedOnly(chatId, '/help');
      const cutoff = new Date(Date.now() + 1);
      await new Promise((r) => setTimeout(r, 5));
      const after = await storedOnly(chatId, '/help');
      expect(await handOverLateMessages({ client: gw.client, taskQueue: gw.wf.taskQueue }, cutoff)).toBe(1);
      await allAnswered([before], [chatId]);
      expect(await getChatMessage(after)).toMatchObject({ status: 'accepted' });
      expect(
        await handOverLateMessages({ client: gw.client, taskQueue: gw.wf.taskQueue }, new Date(Date.now() + 1)),
      ).toBe(1);
      await allAnswered([after], [chatId]);
      expect(repliesOf(chatId)).toEqual([before, after]);
    });
  });
});
