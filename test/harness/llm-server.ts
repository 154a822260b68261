import { createServer, type IncomingMessage, type Server } from 'http';
import type { AddressInfo } from 'net';

/**
 * A real HTTP server speaking the OpenAI chat-completions protocol, standing in for the LLM.
 * `reply` decides each answer; `hold()` makes requests wait until `release()`.
 */
export interface LlmRequestBody {
  model: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- content may be text or parts
  messages: { role: string; content: any; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string } }[];
  response_format?: unknown;
}

export async function useLlmServer(
  reply: (body: LlmRequestBody) => {
    status?: number;
    content: string;
    /** Tool calls the model makes (function name and JSON arguments). */
    toolCalls?: { name: string; args: Record<string, unknown> }[];
  },
) {
  const requests: { path?: string; body: LlmRequestBody }[] = [];
  let calls = 0;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let data = '';
      req.on('data', (c) => (data += c)).on('end', () => resolve(data));
    });
  const server: Server = createServer(async (req, res) => {
    const body = JSON.parse(await read(req));
    requests.push({ path: req.url, body });
    await gate;
    const { status = 200, content, toolCalls } = reply(body);
    const message = toolCalls?.length
      ? {
          role: 'assistant',
          content,
          tool_calls: toolCalls.map((c) => ({
            id: `call_${++calls}`,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) },
          })),
        }
      : { role: 'assistant', content };
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        status === 200
          ? {
              id: 'chatcmpl-test',
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: body.model,
              choices: [{ index: 0, message, finish_reason: toolCalls?.length ? 'tool_calls' : 'stop' }],
              usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
            }
          : { error: { message: content } },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    hold: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
    stop: () =>
      new Promise<void>((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
