import { createServer, type IncomingMessage, type Server } from 'http';
import type { AddressInfo } from 'net';

export interface Received {
  path?: string;
  authorization?: string;
  model?: string | null;
  file?: File;
}

/** A real HTTP server speaking OpenAI's /v1/audio/transcriptions; `answer` decides each reply. */
export async function useSttServer(answer: () => { status: number; type: string; body: string }) {
  const received: Received[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
    });
  const server: Server = createServer(async (req, res) => {
    const raw = await read(req);
    // The platform's own multipart parser reads what the client sent.
    const form = await new Request('http://stt.local/', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: raw,
    }).formData();
    received.push({
      path: req.url,
      authorization: req.headers.authorization,
      model: form.get('model') as string | null,
      file: form.get('file') as File,
    });
    const { status, type, body } = answer();
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
