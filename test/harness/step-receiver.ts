import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request an HttpRequest step sent. */
export interface ReceivedRequest {
  method: string;
  url: string;
  /** The Idempotency-Key header as sent (a quoted structured-header string). */
  key: string;
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
}

type Answer = number | { status: number; headers: Record<string, string> };

/**
 * A real HTTP listener standing in for the services runbook HttpRequest steps call: it records
 * every request and answers `answerFor(url)`: a status (200 by default), or a status with headers,
 * or a promise of one (the request waits for its answer until it settles).
 */
export async function useStepReceiver(answerFor: (url: string) => Answer | Promise<Answer> = () => 200) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = req.url ?? '';
      received.push({
        method: req.method ?? '',
        url,
        key: String(req.headers['idempotency-key'] ?? ''),
        body,
        at: Date.now(),
      });
      void Promise.resolve(answerFor(url)).then((answer) => {
        const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
        if (!res.destroyed) res.writeHead(status, headers).end('ok');
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    /** How many requests reached exactly `path`. */
    hits: (path: string) => received.filter((r) => r.url === path).length,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections(); // requests still waiting for their answer
        server.close(() => r());
      }),
  };
}
