import { createServer, type IncomingHttpHeaders, type Server } from 'http';
import type { AddressInfo } from 'net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedNotification {
  path: string;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each channel's own JSON
  body: any;
  raw: string;
  /** What the receiver answered. */
  status: number;
}

type Answer = (
  n: Omit<ReceivedNotification, 'status'>,
  attempt: number,
) => { status: number; headers?: Record<string, string> };

/**
 * A real HTTP server standing in for Slack, PagerDuty's Events API and generic webhook receivers:
 * every request is recorded by path; `answerWith` decides the status per attempt (attempts are
 * counted per `Idempotency-Key`), e.g. to fail the first tries. Webhook signatures are checked
 * with the reference `standardwebhooks` library (`verify`), not with Foghorn's own code.
 */
export async function useNotificationReceiver() {
  const requests: ReceivedNotification[] = [];
  let answer: Answer = () => ({ status: 200 });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const n = { path: req.url ?? '', headers: req.headers, body: JSON.parse(raw || 'null'), raw };
      const key = req.headers['idempotency-key'];
      const attempt = requests.filter((r) => r.headers['idempotency-key'] === key).length + 1;
      const { status, headers = {} } = answer(n, attempt);
      requests.push({ ...n, status });
      res.writeHead(status, headers).end(status === 202 ? '{"status":"success"}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accepted = (path?: string) => requests.filter((r) => r.status < 300 && (!path || r.path === path));

  return {
    base,
    host: new URL(base).host,
    url: (path: string) => `${base}${path}`,
    requests,
    accepted,
    answerWith: (fn: Answer) => {
      answer = fn;
    },
    /** Waits until `count` accepted requests on `path` match. */
    waitFor: async (
      path: string,
      match: (n: ReceivedNotification) => boolean = () => true,
      count = 1,
      timeoutMs = 60_000,
    ): Promise<ReceivedNotification[]> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = accepted(path).filter(match);
        if (found.length >= count) return found;
        if (Date.now() > deadline)
          throw new Error(
            `${count} matching request(s) on ${path} not seen in ${timeoutMs} ms; got: ${JSON.stringify(requests.map((r) => [r.path, r.status, r.body?.type ?? r.body?.event_action ?? r.body?.text]))}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /** True when the Standard Webhooks signature of `n` verifies with `secret`. */
    verify: (n: ReceivedNotification, secret: string): boolean => {
      try {
        // `whsec_<base64>` is the library's own form; any other secret is used as raw bytes.
        const webhook = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
        webhook.verify(n.raw, n.headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
