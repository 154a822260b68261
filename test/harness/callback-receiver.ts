import { createServer, type IncomingHttpHeaders, type Server } from 'http';
import type { AddressInfo } from 'net';
import { Webhook } from 'standardwebhooks';
import type { CallbackBody } from '../../domain/chat';

export interface ReceivedCallback {
  at: number;
  headers: IncomingHttpHeaders;
  body: CallbackBody;
  /** Checked with the reference Standard Webhooks library, not with Foghorn's own code. */
  signatureValid: boolean;
  /** What the receiver answered. */
  status: number;
}

type Answer = { status: number; headers?: Record<string, string> };

/**
 * A real HTTP server standing in for the chat system's callback endpoint. Records every
 * attempt; `answer` decides the status per attempt (default 200), e.g. to fail the first tries.
 * `delivered` lists the callbacks it accepted (2xx), in arrival order.
 */
export async function useCallbackReceiver(secret: string) {
  const attempts: ReceivedCallback[] = [];
  let answer: (body: CallbackBody, attempt: number) => Answer = () => ({ status: 200 });
  const verifier = new Webhook(secret, { format: 'raw' });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as CallbackBody;
      let signatureValid = true;
      try {
        verifier.verify(raw, req.headers as Record<string, string>);
      } catch {
        signatureValid = false;
      }
      const attempt = attempts.filter((a) => a.body.message_id === body.message_id && a.body.seq === body.seq).length;
      const { status, headers = {} } = answer(body, attempt + 1);
      attempts.push({ at: Date.now(), headers: req.headers, body, signatureValid, status });
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const delivered = () => attempts.filter((a) => a.status < 300);

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    attempts,
    delivered,
    /** Delivered callbacks of one message, in arrival order. */
    of: (messageId: string) => delivered().filter((a) => a.body.message_id === messageId),
    answerWith: (fn: typeof answer) => {
      answer = fn;
    },
    /** Waits until a delivered callback matches (e.g. the final reply of a message). */
    waitFor: async (match: (c: ReceivedCallback) => boolean, timeoutMs = 30_000): Promise<ReceivedCallback> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = delivered().find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no matching callback in ${timeoutMs} ms; got: ${JSON.stringify(attempts.map((a) => [a.body.message_id, a.body.kind, a.body.seq, a.status]))}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
