import net from 'net';

/**
 * A TCP forwarder between a gateway and the real Temporal server, to take Temporal away and give
 * it back without touching either side: `hold()` keeps every byte in both directions (calls
 * hang, as when the server is stuck or the network drops packets), `open()` delivers what was
 * held and forwards again, `close()` resets every connection and refuses new ones for good.
 */
export async function useTcpGate(target: string) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let holding = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  /** Forwards `from` → `to`, keeping chunks while held (in order). */
  const pipe = (from: net.Socket, to: net.Socket) => {
    let held: Buffer[] | undefined;
    from.on('data', (chunk: Buffer) => {
      if (held) return void held.push(chunk);
      if (!holding) return void to.write(chunk);
      held = [chunk];
      waiting.push(() => {
        for (const c of held ?? []) if (!to.destroyed) to.write(c);
        held = undefined;
      });
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold: () => {
      holding = true;
    },
    open: () => {
      holding = false;
      for (const release of waiting.splice(0)) release();
    },
    close: async () => {
      waiting.length = 0;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
