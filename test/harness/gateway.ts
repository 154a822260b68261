import type { AddressInfo } from 'net';
import { createLogger } from '../../api/observability';
import { parseConfig } from '../../config/env';
import { startGateway, type RunningGateway } from '../../gateway/gateway';
import { useCallbackReceiver } from './callback-receiver';
import { useStack } from './stack';

export const GATEWAY_SECRET = 'test-shared-secret-0123456789abcdef';

/**
 * The chat gateway end to end: the webhook adapter on an ephemeral port, the API, a worker on
 * the Temporal test server, MongoDB, and a real callback receiver. `env` configures both the
 * gateway and the worker, as one deployment's environment would.
 */
export async function useGateway(opts: { env?: Record<string, string>; withoutWorkflowCache?: boolean } = {}) {
  const receiver = await useCallbackReceiver(GATEWAY_SECRET);
  const env = {
    FOGHORN_WEBHOOK_SECRET: GATEWAY_SECRET,
    FOGHORN_WEBHOOK_CALLBACK_URL: receiver.url,
    FOGHORN_WEBHOOK_ADDR: '127.0.0.1:0',
    ...opts.env,
  };
  const stack = await useStack({ env, withoutWorkflowCache: opts.withoutWorkflowCache });
  const config = parseConfig({ FOGHORN_LOG_LEVEL: 'silent', FOGHORN_TASK_QUEUE: stack.wf.taskQueue, ...env });
  let gateway: RunningGateway = await startGateway(config, stack.client, createLogger('silent'));
  const url = () => `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}${config.FOGHORN_WEBHOOK_PATH}`;

  /** Posts to the webhook with the shared secret (unless headers override it). */
  const post = async (body: unknown, init: { headers?: Record<string, string>; method?: string } = {}) => {
    const res = await fetch(url(), {
      method: init.method ?? 'POST',
      headers: { 'content-type': 'application/json', 'x-foghorn-secret': GATEWAY_SECRET, ...init.headers },
      ...(init.method === undefined || init.method === 'POST'
        ? { body: typeof body === 'string' ? body : JSON.stringify(body) }
        : {}),
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  };

  return {
    ...stack,
    receiver,
    config,
    url,
    post,
    /** Sends a message and returns its message id (asserting the 202). */
    send: async (body: Record<string, unknown>): Promise<string> => {
      const res = await post(body);
      if (res.status !== 202) throw new Error(`expected 202, got ${res.status}: ${res.text}`);
      return res.body.message_id as string;
    },
    /** The final (or error) callback of a message. */
    reply: (messageId: string, timeoutMs?: number) =>
      receiver.waitFor(
        (c) => c.body.message_id === messageId && (c.body.kind === 'final' || c.body.kind === 'error'),
        timeoutMs,
      ),
    restartGateway: async () => {
      await gateway.stop();
      gateway = await startGateway(config, stack.client, createLogger('silent'));
    },
    stopGateway: () => gateway.stop(),
    stop: async () => {
      await gateway.stop().catch(() => undefined);
      await stack.stop();
      await receiver.stop();
    },
  };
}
