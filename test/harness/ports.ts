import { createServer } from 'net';

/**
 * Ports below the kernel's ephemeral range (32768–60999 on Linux): the OS never hands these out
 * for `listen(0)` or outgoing connections, so a port chosen here is not taken by someone else's
 * ephemeral port while a child process starts up, or while a crash test restarts a stack on it.
 */
const FIRST = 20_000;
const COUNT = 12_000;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port that was free a moment ago, for child processes that need fixed ports. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FIRST + Math.floor(Math.random() * COUNT);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port found below the ephemeral range');
}
