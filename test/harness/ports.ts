import { createServer, type AddressInfo } from 'net';

/** A port that was free a moment ago (the OS picks it), for child processes that need fixed ports. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
