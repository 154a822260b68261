import express from 'express';
import type { AddressInfo } from 'net';
import { connect } from 'net';
import { close, listen } from '../../gateway/server';

/**
 * An idle keep-alive connection outlives Node's 5 s default (gateway/server.ts, KEEP_ALIVE_MS):
 * a webhook sender or a load balancer that reuses it after a pause gets an answer, not a reset.
 * Stopping does not wait out that keep-alive: a request in flight finishes, then its connection
 * closes.
 */
describe('the HTTP listener of the API and the webhook', () => {
  it('answers a second request on a connection idle for longer than 5 s', async () => {
    const app = express();
    app.get('/ping', (_req, res) => res.send('pong'));
    const server = await listen(app, '127.0.0.1', 0);
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      let received = '';
      let closed = false;
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => (closed = true));
      const ask = async () => {
        received = '';
        socket.write('GET /ping HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
        for (let i = 0; i < 100 && !received.endsWith('pong'); i++) await new Promise((r) => setTimeout(r, 50));
        return received;
      };
      expect(await ask()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*Keep-Alive: timeout=65[\s\S]*pong$/);
      await new Promise((r) => setTimeout(r, 6_000));
      expect(closed).toBe(false);
      expect(await ask()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*pong$/);
    } finally {
      socket.destroy();
      await close(server);
    }
  }, 30_000);

  it('stops without waiting out the keep-alive of a connection that was answering', async () => {
    const app = express();
    let arrived: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    app.get('/slow', (_req, res) => {
      arrived();
      setTimeout(() => res.send('done'), 300);
    });
    const server = await listen(app, '127.0.0.1', 0);
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let deadline: NodeJS.Timeout | undefined;
    try {
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      await inFlight; // the server has the request, and answers it in 300 ms
      const stopped = close(server).then(() => 'closed');
      const outcome = await Promise.race([
        stopped,
        new Promise((r) => (deadline = setTimeout(() => r('still open'), 15_000))),
      ]);
      expect(outcome).toBe('closed');
      expect(received).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*done$/);
    } finally {
      clearTimeout(deadline);
      socket.destroy();
    }
  }, 30_000);
});
