import { runActivity } from '../harness/activity';
import { ApplicationFailure } from '@temporalio/common';
import { randomBytes } from 'crypto';
import { createServer, type RequestListener, type Server } from 'http';
import type { AddressInfo } from 'net';
import { createMediaActivities, downloadGuarded, DownloadRefused } from '../../activities/media';
import { parseConfig } from '../../config/env';
import { getMedia } from '../../store/media';
import { useMongo } from '../harness/mongo';

/** A real HTTP listener on loopback that records the paths it was asked for. */
async function listen(handler: RequestListener) {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    paths,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const allowPrivate = parseConfig({ FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS: 'true' });
const fetchWith = (config = allowPrivate) => {
  const { fetchMedia } = createMediaActivities(config);
  return (input: Parameters<typeof fetchMedia>[0]) => runActivity(fetchMedia, input);
};

describe('fetchMedia: guarded downloads into GridFS', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  let server: Awaited<ReturnType<typeof listen>>;
  const payload = randomBytes(300 * 1024 + 5);

  beforeAll(async () => {
    mongo = await useMongo();
    server = await listen((req, res) => {
      const path = req.url ?? '';
      if (path === '/voice.ogg') {
        res.writeHead(200, { 'content-type': 'audio/ogg; codecs=opus', 'content-length': payload.length });
        return res.end(payload);
      }
      if (path === '/page') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html></html>');
      }
      if (path.startsWith('/hop/')) {
        const n = Number(path.slice(5));
        res.writeHead(n === 3 ? 307 : 302, { location: n < 3 ? `/hop/${n + 1}` : '/voice.ogg' });
        return res.end();
      }
      if (path === '/loop') {
        res.writeHead(301, { location: '/loop' });
        return res.end();
      }
      if (path === '/to-file') {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        return res.end();
      }
      if (path === '/big-declared') {
        res.writeHead(200, { 'content-type': 'audio/ogg', 'content-length': 5000 });
        return res.end(Buffer.alloc(5000));
      }
      if (path === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'audio/ogg' }); // no length: chunked
        const timer = setInterval(() => res.write(Buffer.alloc(400)), 5);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (path === '/hang') return; // never answers
      if (path === '/missing') {
        res.writeHead(404);
        return res.end('no');
      }
      if (path === '/busy') {
        res.writeHead(503);
        return res.end('later');
      }
      res.writeHead(500);
      res.end();
    });
  });
  afterAll(async () => {
    await server.stop();
    await mongo.stop();
  });
  beforeEach(() => server.paths.splice(0));

  it('downloads, stores the bytes under <messageId>-<field>, and takes the MIME type from the response', async () => {
    const ref = await fetchWith()({ messageId: 'm1', field: 'audio', url: server.url('/voice.ogg') });
    expect(ref).toEqual({
      fileId: 'm1-audio',
      mime: 'audio/ogg',
      filename: 'voice.ogg',
      url: server.url('/voice.ogg'),
    });
    const stored = await getMedia('m1-audio');
    expect(stored.data.equals(payload)).toBe(true);
    expect(stored).toMatchObject({ filename: 'voice.ogg', mime: 'audio/ogg' });
  });

  it('prefers the MIME type the message gave, and ignores a non-media Content-Type and a name without extension', async () => {
    const given = await fetchWith()({
      messageId: 'm2',
      field: 'audio',
      url: server.url('/voice.ogg'),
      mime: 'audio/opus',
    });
    expect(given.mime).toBe('audio/opus');
    const html = await fetchWith()({ messageId: 'm3', field: 'image', url: server.url('/page') });
    expect(html).toEqual({ fileId: 'm3-image', filename: 'image', url: server.url('/page') });
  });

  it('refuses loopback when private URLs are not allowed, without sending a request', async () => {
    const strict = fetchWith(parseConfig({}));
    await expect(strict({ messageId: 'm4', field: 'audio', url: server.url('/voice.ogg') })).rejects.toMatchObject({
      type: 'MediaRefused',
      nonRetryable: true,
      message:
        'Could not download the audio: refused: 127.0.0.1 is a loopback address (set FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true to allow)',
    });
    // A name that resolves to loopback, and the spellings URL parsing turns into loopback.
    for (const host of ['localhost', '0x7f.1', '2130706433', '[::ffff:127.0.0.1]', '[::1]']) {
      await expect(
        strict({ messageId: 'm4', field: 'image', url: `http://${host}:${server.port}/voice.ogg` }),
      ).rejects.toMatchObject({ type: 'MediaRefused', message: expect.stringMatching(/is a loopback address/) });
    }
    expect(server.paths).toEqual([]);
  });

  it('follows a chain of redirects', async () => {
    const ref = await fetchWith()({ messageId: 'm5', field: 'audio', url: server.url('/hop/1') });
    expect(server.paths).toEqual(['/hop/1', '/hop/2', '/hop/3', '/voice.ogg']);
    expect((await getMedia(ref.fileId!)).data.equals(payload)).toBe(true);
  });

  it('refuses a redirect loop after 5 hops', async () => {
    await expect(fetchWith()({ messageId: 'm6', field: 'audio', url: server.url('/loop') })).rejects.toMatchObject({
      type: 'MediaRefused',
      message: 'Could not download the audio: too many redirects (more than 5)',
    });
    expect(server.paths).toHaveLength(6);
  });

  it('refuses a redirect to another scheme', async () => {
    await expect(fetchWith()({ messageId: 'm7', field: 'image', url: server.url('/to-file') })).rejects.toMatchObject({
      type: 'MediaRefused',
      message: 'Could not download the image: only http and https URLs can be downloaded, not file',
    });
  });

  it('refuses files over the cap, by Content-Length and while streaming', async () => {
    const small = fetchWith(
      parseConfig({ FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS: 'true', FOGHORN_GATEWAY_MAX_AUDIO_BYTES: '1000' }),
    );
    for (const path of ['/big-declared', '/big-chunked']) {
      await expect(small({ messageId: 'm8', field: 'audio', url: server.url(path) })).rejects.toMatchObject({
        type: 'MediaRefused',
        message: 'Could not download the audio: the file is larger than the 1000 bytes limit',
      });
    }
    await expect(getMedia('m8-audio')).rejects.toThrow('not found');
    const mib = await downloadGuarded(server.url('/big-declared'), {
      allowPrivate: true,
      maxBytes: 1024,
      timeoutMs: 5000,
    }).catch((err: Error) => err);
    expect(mib).toEqual(new DownloadRefused('the file is larger than the 1 KiB limit'));
  });

  it('gives up after the timeout with a retryable error', async () => {
    const err = await downloadGuarded(server.url('/hang'), {
      allowPrivate: true,
      maxBytes: 1000,
      timeoutMs: 300,
    }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DownloadRefused);
    expect((err as Error).message).toBe('timed out after 0.3 s');
  });

  it('refuses a 4xx for good and retries a 5xx', async () => {
    await expect(fetchWith()({ messageId: 'm9', field: 'audio', url: server.url('/missing') })).rejects.toMatchObject({
      type: 'MediaRefused',
      nonRetryable: true,
      message: 'Could not download the audio: the server answered 404 Not Found',
    });
    const busy = await fetchWith()({ messageId: 'm9', field: 'audio', url: server.url('/busy') }).catch(
      (e: Error) => e,
    );
    expect(busy).not.toBeInstanceOf(ApplicationFailure);
    expect((busy as Error).message).toBe('Could not download the audio: the server answered 503 Service Unavailable');
  });

  it('refuses URLs that are not http or https', async () => {
    for (const url of ['ftp://127.0.0.1/voice.ogg', 'file:///etc/passwd', 'not a url']) {
      await expect(fetchWith()({ messageId: 'm10', field: 'audio', url })).rejects.toMatchObject({
        type: 'MediaRefused',
        nonRetryable: true,
      });
    }
    expect(server.paths).toEqual([]);
  });
});

describe('downloadGuarded: every redirect hop is checked again', () => {
  // Names resolve to documentation/private addresses; connectTo dials loopback, so no traffic
  // ever leaves this machine while the guard sees the addresses a real resolver would give.
  const resolve = async (host: string) =>
    ({ 'public.test': ['198.51.100.7'], 'internal.test': ['10.0.0.5'], 'mixed.test': ['198.51.100.8', '10.0.0.6'] })[
      host
    ] ?? [];
  const connectTo = () => '127.0.0.1';
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    server = await listen((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: `http://internal.test:${server.port}/secret` });
        return res.end();
      }
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(`host=${req.headers.host}`);
      }
      res.writeHead(200);
      res.end('secret');
    });
  });
  afterAll(() => server.stop());

  const options = { allowPrivate: false, maxBytes: 1000, timeoutMs: 5000, resolve, connectTo };

  it('connects to the checked address and keeps the Host header', async () => {
    const got = await downloadGuarded(`http://public.test:${server.port}/ok`, options);
    expect(got).toEqual({
      data: Buffer.from(`host=public.test:${server.port}`),
      contentType: 'image/png',
      finalUrl: `http://public.test:${server.port}/ok`,
    });
  });

  it('refuses a redirect from a public host to a private one before requesting it', async () => {
    await expect(downloadGuarded(`http://public.test:${server.port}/start`, options)).rejects.toEqual(
      new DownloadRefused(
        'refused: 10.0.0.5 is a private address (set FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true to allow)',
      ),
    );
    expect(server.paths).toContain('/start');
    expect(server.paths).not.toContain('/secret');
  });

  it('refuses a host when any of its addresses is refused', async () => {
    await expect(downloadGuarded(`http://mixed.test:${server.port}/ok`, options)).rejects.toThrow(
      'refused: 10.0.0.6 is a private address',
    );
    await expect(downloadGuarded(`http://nowhere.test:${server.port}/ok`, options)).rejects.toThrow(
      'the host nowhere.test has no address',
    );
  });
});
