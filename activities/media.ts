import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { promises as dns } from 'dns';
import http from 'http';
import https from 'https';
import type { LookupFunction } from 'net';
import { z } from 'zod';
import type { MediaRef } from '../domain/chat';
import type { Config } from '../config/env';
import { isIpAddress, refusalReason } from '../domain/ssrf';
import { setMessageMedia } from '../store/chat';
import { putMedia } from '../store/media';

/** Redirects followed per download; each hop is checked like the first URL. */
export const MAX_REDIRECTS = 5;
export const DOWNLOAD_TIMEOUT_MS = 30_000;

/** A download that will fail the same way however often it is retried (SSRF, size, 4xx). */
export class DownloadRefused extends Error {
  override readonly name = 'DownloadRefused';
}

export interface DownloadOptions {
  allowPrivate: boolean;
  maxBytes: number;
  /** For the whole download: DNS, every hop and the body. */
  timeoutMs: number;
  /** Host name → addresses; tests inject names that resolve to documentation addresses. */
  resolve?: (host: string) => Promise<string[]>;
  /** Checked address → address actually dialled; tests keep all traffic on loopback. */
  connectTo?: (address: string) => string;
  signal?: AbortSignal;
}

export interface Downloaded {
  data: Buffer;
  /** Content-Type of the final response, lower-cased, without parameters. */
  contentType?: string;
  /** The URL the bytes came from, after redirects. */
  finalUrl: string;
}

async function systemResolve(host: string): Promise<string[]> {
  try {
    return (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') throw new DownloadRefused(`the host ${host} does not exist`);
    throw new Error(`could not resolve ${host}: ${code ?? (err as Error).message}`);
  }
}

export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} bytes`;
}

/**
 * Downloads an http(s) URL without letting it reach internal services: every address the host
 * resolves to must pass the SSRF rules, the socket is pinned to the checked address (a second
 * DNS answer cannot swap it), redirects are followed by hand and checked again, and the body
 * is capped. Throws DownloadRefused for permanent refusals and plain errors for transient ones.
 */
export async function downloadGuarded(url: string, options: DownloadOptions): Promise<Downloaded> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`timed out after ${options.timeoutMs / 1000} s`)),
    options.timeoutMs,
  );
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  try {
    let current = url;
    for (let hop = 0; ; hop++) {
      const target = parseTarget(current);
      const address = await abortable(checkedAddress(target.hostname, options), signal);
      const answer = await request(target, address, options, signal);
      if (answer.kind === 'body') {
        const { data, contentType } = answer;
        return { data, ...(contentType && { contentType }), finalUrl: current };
      }
      if (hop >= MAX_REDIRECTS) throw new DownloadRefused(`too many redirects (more than ${MAX_REDIRECTS})`);
      current = redirectTarget(answer.location, current);
    }
  } catch (err) {
    throw signal.aborted && !(err instanceof DownloadRefused) ? signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

function redirectTarget(location: string, base: string): string {
  try {
    return new URL(location, base).toString();
  } catch {
    throw new DownloadRefused(`the server redirected to an invalid URL ${JSON.stringify(location)}`);
  }
}

function parseTarget(text: string): URL {
  let target: URL;
  try {
    target = new URL(text);
  } catch {
    throw new DownloadRefused(`${JSON.stringify(text)} is not a valid URL`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new DownloadRefused(`only http and https URLs can be downloaded, not ${target.protocol.replace(/:$/, '')}`);
  return target;
}

/** The address to dial for `hostname`, after checking every address it resolves to. */
async function checkedAddress(hostname: string, options: DownloadOptions): Promise<string> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIpAddress(host) ? [host] : await (options.resolve ?? systemResolve)(host);
  if (addresses.length === 0) throw new DownloadRefused(`the host ${host} has no address`);
  for (const address of addresses) {
    const reason = refusalReason(address, options.allowPrivate);
    if (reason) throw new DownloadRefused(reason);
  }
  return addresses[0]!;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

type Answer = { kind: 'body'; data: Buffer; contentType?: string } | { kind: 'redirect'; location: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function request(target: URL, address: string, options: DownloadOptions, signal: AbortSignal): Promise<Answer> {
  const dial = options.connectTo ? options.connectTo(address) : address;
  const family = dial.includes(':') ? 6 : 4;
  // Node calls this instead of DNS for host names (IP literals need no lookup): the pinned address.
  const lookup: LookupFunction = (_host, opts, callback) => {
    if (opts.all) callback(null, [{ address: dial, family }]);
    else callback(null, dial, family);
  };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const req = client.request(
      target,
      { method: 'GET', lookup, agent: false, signal, headers: { 'user-agent': 'Foghorn', accept: '*/*' } },
      (res) => {
        const status = res.statusCode ?? 0;
        const statusText = `${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`;
        if (REDIRECTS.has(status) && res.headers.location) {
          res.resume();
          return resolve({ kind: 'redirect', location: res.headers.location });
        }
        if (status >= 500) {
          res.resume();
          return reject(new Error(`the server answered ${statusText}`));
        }
        if (status < 200 || status >= 300) {
          res.resume();
          return reject(new DownloadRefused(`the server answered ${statusText}`));
        }
        const tooLarge = () =>
          new DownloadRefused(`the file is larger than the ${formatBytes(options.maxBytes)} limit`);
        if (Number(res.headers['content-length']) > options.maxBytes) {
          res.destroy();
          return reject(tooLarge());
        }
        const chunks: Buffer[] = [];
        let length = 0;
        res.on('data', (chunk: Buffer) => {
          length += chunk.length;
          if (length > options.maxBytes) {
            res.destroy();
            return reject(tooLarge());
          }
          chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the connection closed before the download finished'));
        });
        res.on('end', () => {
          const contentType = res.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
          resolve({ kind: 'body', data: Buffer.concat(chunks), ...(contentType && { contentType }) });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The usual file extension for a media type, with the dot; '' when unknown. */
export function extensionForMime(mime: string | undefined): string {
  const known: Record<string, string> = {
    'audio/ogg': '.ogg',
    'audio/opus': '.opus',
    'audio/mpeg': '.mp3',
    'audio/mp3': '.mp3',
    'audio/mp4': '.m4a',
    'audio/x-m4a': '.m4a',
    'audio/aac': '.aac',
    'audio/wav': '.wav',
    'audio/x-wav': '.wav',
    'audio/wave': '.wav',
    'audio/vnd.wave': '.wav',
    'audio/flac': '.flac',
    'audio/x-flac': '.flac',
    'audio/webm': '.webm',
    'audio/amr': '.amr',
    'image/png': '.png',
    'image/jpeg': '.jpg',
    'image/gif': '.gif',
    'image/webp': '.webp',
    'image/svg+xml': '.svg',
  };
  const base = mime?.split(';')[0]?.trim().toLowerCase();
  return (base && known[base]) ?? '';
}

/** The URL's last path segment when it looks like a file name, else `<field><ext>`. */
function filenameFor(url: string, field: string, mime: string | undefined): string {
  let last = '';
  try {
    last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    // a malformed escape: fall back to the generic name
  }
  const safe = last.replace(/[^A-Za-z0-9._-]/g, '_').slice(-100);
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.[A-Za-z0-9]+$/.test(safe) ? safe : `${field}${extensionForMime(mime)}`;
}

const fetchMediaInput = z.object({
  messageId: z.string().min(1),
  field: z.enum(['audio', 'image']),
  url: z.string().min(1),
  mime: z.string().min(1).optional(),
});

/** Downloads media a chat message points to (audio_url, image_url) into GridFS. */
export function createMediaActivities(config: Config) {
  return {
    /**
     * Refusals (SSRF, size, scheme, 4xx) fail for good with type MediaRefused and a message the
     * chat user reads; timeouts, 5xx and broken connections throw plain errors and are retried.
     */
    async fetchMedia(input: {
      messageId: string;
      field: 'audio' | 'image';
      url: string;
      mime?: string;
    }): Promise<MediaRef> {
      const parsed = fetchMediaInput.safeParse(input);
      if (!parsed.success)
        throw ApplicationFailure.nonRetryable(`invalid input: ${parsed.error.issues[0]?.message}`, 'MediaRefused');
      const { messageId, field, url, mime } = parsed.data;
      let downloaded: Downloaded;
      try {
        downloaded = await downloadGuarded(url, {
          allowPrivate: config.FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS,
          // The spec caps audio; images share the cap so one body limit covers both.
          maxBytes: config.FOGHORN_GATEWAY_MAX_AUDIO_BYTES,
          timeoutMs: DOWNLOAD_TIMEOUT_MS,
          signal: Context.current().cancellationSignal,
        });
      } catch (err) {
        const message = `Could not download the ${field}: ${(err as Error).message}`;
        if (err instanceof DownloadRefused) throw ApplicationFailure.nonRetryable(message, 'MediaRefused');
        throw new Error(message, { cause: err });
      }
      const served = downloaded.contentType;
      const type = mime ?? (served && /^(audio|image)\//.test(served) ? served : undefined);
      const filename = filenameFor(downloaded.finalUrl, field, type);
      const { fileId } = await putMedia(downloaded.data, {
        filename,
        ...(type && { mime: type }),
        id: `${messageId}-${field}`,
      });
      const ref: MediaRef = { fileId, filename, url, ...(type && { mime: type }) };
      await setMessageMedia(messageId, field, ref); // the stored message points at its blob from now on
      return ref;
    },
  };
}

export type MediaActivities = ReturnType<typeof createMediaActivities>;
