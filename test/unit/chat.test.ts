import { Webhook } from 'standardwebhooks';
import { extractSendDirectives, truncateReply } from '../../domain/chat';
import { parseInbound } from '../../contracts/chat-inbound';
import { parseConfig } from '../../config/env';
import { BACKOFF_CAP_MS, parseRetryAfter, retryDelayMs, RETRY_AFTER_CAP_MS } from '../../domain/delivery';
import { secretMatcher, signWebhook, verifyWebhook } from '../../domain/webhook-signature';

describe('reply truncation', () => {
  it('keeps 3500 characters and cuts 3501 to 3499 + …', () => {
    expect(truncateReply('a'.repeat(3500))).toBe('a'.repeat(3500));
    expect(truncateReply('a'.repeat(3501))).toBe('a'.repeat(3499) + '…');
  });
  it('counts code points, never splitting an emoji', () => {
    const cut = truncateReply('🔥'.repeat(3600));
    expect(Array.from(cut)).toHaveLength(3500);
    expect(cut.endsWith('🔥…')).toBe(true);
  });
});

describe('@send webhook directives', () => {
  it('splits proactive messages from the reply', () => {
    expect(extractSendDirectives('Done.\n@send webhook Deploy finished\n  @send   webhook  second one  \nBye')).toEqual(
      {
        reply: 'Done.\nBye',
        proactive: ['Deploy finished', 'second one'],
      },
    );
    expect(extractSendDirectives('mentions @send webhook inline only')).toEqual({
      reply: 'mentions @send webhook inline only',
      proactive: [],
    });
  });
});

describe('callback retry timing', () => {
  it('backs off exponentially with half jitter, capped', () => {
    expect(retryDelayMs(1, 0)).toBe(500);
    expect(retryDelayMs(1, 0.999999)).toBe(1000);
    expect(retryDelayMs(4, 0)).toBe(4000);
    expect(retryDelayMs(40, 1)).toBe(BACKOFF_CAP_MS);
  });
  it('honours a longer Retry-After, up to an hour', () => {
    expect(retryDelayMs(1, 0, 5_000)).toBe(5_000);
    expect(retryDelayMs(5, 1, 1_000)).toBe(16_000); // our own backoff is longer
    expect(retryDelayMs(1, 0, 10 * RETRY_AFTER_CAP_MS)).toBe(RETRY_AFTER_CAP_MS);
  });
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('Standard Webhooks signatures', () => {
  const body = '{"chat_id":"c","text":"hi"}';
  it('are accepted by the reference library, for a plain and a whsec_ secret', () => {
    const ts = Math.floor(Date.now() / 1000);
    const plain = 'shared-secret';
    new Webhook(plain, { format: 'raw' }).verify(body, {
      'webhook-id': 'msg-1.1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signWebhook(plain, 'msg-1.1', ts, body),
    });
    const whsec = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    new Webhook(whsec).verify(body, {
      'webhook-id': 'msg-1.2',
      'webhook-timestamp': String(ts),
      'webhook-signature': signWebhook(whsec, 'msg-1.2', ts, body),
    });
  });
  it('verify rejects a changed body and accepts any listed v1 signature', () => {
    const sig = signWebhook('s', 'id', 1, body);
    expect(verifyWebhook('s', { id: 'id', timestamp: '1', signature: `v1,bogus ${sig}` }, body)).toBe(true);
    expect(verifyWebhook('s', { id: 'id', timestamp: '1', signature: sig }, body + ' ')).toBe(false);
  });
  it('compares the inbound secret exactly', () => {
    const matches = secretMatcher('abc');
    expect(matches('abc')).toBe(true);
    expect(matches('abd')).toBe(false);
    expect(matches('abcd')).toBe(false);
    expect(matches('ab')).toBe(false);
    expect(matches('')).toBe(false);
    expect(matches(undefined)).toBe(false);
  });
});

describe('gateway configuration', () => {
  it('has the documented defaults', () => {
    expect(parseConfig({})).toMatchObject({
      FOGHORN_WEBHOOK_PATH: '/inbound',
      FOGHORN_GATEWAY_MAX_AUDIO_BYTES: 20 * 1024 * 1024,
      FOGHORN_GATEWAY_ROLE: 'operator',
      FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS: false,
      FOGHORN_AGENT_SHELL: 'on',
      FOGHORN_AGENT_SHELL_TIMEOUT: 30_000,
    });
    expect(parseConfig({}).FOGHORN_WEBHOOK_ADDR).toBeUndefined();
  });
  it('parses the listen address and rejects bad values with one line each', () => {
    expect(parseConfig({ FOGHORN_WEBHOOK_ADDR: ':8085' }).FOGHORN_WEBHOOK_ADDR).toEqual({
      host: '0.0.0.0',
      port: 8085,
    });
    expect(() =>
      parseConfig({ FOGHORN_WEBHOOK_ADDR: '8085', FOGHORN_GATEWAY_ROLE: 'root', FOGHORN_AGENT_SHELL_TIMEOUT: '0s' }),
    ).toThrow(/FOGHORN_WEBHOOK_ADDR="8085".*\n.*FOGHORN_GATEWAY_ROLE="root".*\n.*FOGHORN_AGENT_SHELL_TIMEOUT="0s"/);
  });
});

describe('inbound base64', () => {
  it('decodes a 20 MB voice note (no regexp stack overflow on long input)', () => {
    const audio = Buffer.alloc(20 * 1000 * 1000, 7);
    const result = parseInbound({ chat_id: 'c', audio_b64: audio.toString('base64') }, 21 * 1024 * 1024);
    expect(result.ok && result.message.audio?.data?.equals(audio)).toBe(true);
  });
  it('refuses bad padding and stray characters', () => {
    for (const bad of ['abc', 'ab=c', 'a===', 'abcd!', '====']) {
      expect(parseInbound({ chat_id: 'c', audio_b64: bad }, 1000)).toMatchObject({ ok: false, status: 400 });
    }
  });
});
