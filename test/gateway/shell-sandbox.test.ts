import { MockActivityEnvironment } from '@temporalio/testing';
import { spawn, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import { readdirSync, readFileSync } from 'fs';
import { chmod, mkdir, mkdtemp, realpath, rm, stat, writeFile } from 'fs/promises';
import { connect } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import { createAgentToolActivities } from '../../activities/agent-tools';
import { DEFAULT_SHELL_DIR } from '../../activities/shell';
import type { ToolCall } from '../../domain/agent-tools';
import { preparePrivateDataDir } from '../../cli/dev';
import { parseConfig } from '../../config/env';
import { GATEWAY_SECRET, useGateway } from '../harness/gateway';

/** Real values for every secret the worker holds; none may ever come back through `/sh`. */
const SECRETS = {
  FOGHORN_ADMIN_TOKEN: `fh_${randomBytes(32).toString('base64url')}`,
  FOGHORN_LLM_API_KEY: `sk-llm-${randomBytes(16).toString('hex')}`,
  FOGHORN_STT_API_KEY: `stt-${randomBytes(16).toString('hex')}`,
  FOGHORN_AUDIT_KEY: randomBytes(32).toString('hex'),
};
const SECRET_VALUES = [...Object.values(SECRETS), GATEWAY_SECRET];

/** Processes (pids) whose environment, as the kernel keeps it, holds `value`: root can read them all. */
function holders(value: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/environ`, 'latin1').includes(value);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/**
 * The attempts of issue 8 through the real chat gateway: a chat user with the webhook secret
 * (gateway role operator) uses `/sh` to look for Foghorn's secrets, files and database.
 */
describe('the agent shell is a sandbox (through the chat gateway)', () => {
  let gw: Awaited<ReturnType<typeof useGateway>>;
  let root: string;
  let dataDir: string;
  let decoy: ChildProcess;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(tmpdir(), 'foghorn-sandbox-')));
    await chmod(root, 0o755); // reachable by anyone: only the data dir's own mode protects it
    await writeFile(path.join(root, 'public.txt'), 'public\n', { mode: 0o644 });
    dataDir = path.join(root, 'data');
    await mkdir(dataDir, { mode: 0o755 }); // as an older `foghorn dev` left it
    await preparePrivateDataDir(dataDir);
    // Even a file that is readable by everyone is out of reach inside the data dir.
    await writeFile(path.join(dataDir, 'admin-token'), `${SECRETS.FOGHORN_ADMIN_TOKEN}\n`, { mode: 0o644 });

    // The worst case: the secrets are in this process's environment (so every server the harness
    // starts inherits them in its kernel-kept environment block), and in a decoy root process.
    for (const [name, value] of Object.entries({ ...SECRETS, FOGHORN_WEBHOOK_SECRET: GATEWAY_SECRET })) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    decoy = spawn('sleep', ['600'], { env: { PATH: '/usr/bin:/bin', ...SECRETS }, stdio: 'ignore' });
    gw = await useGateway({ env: { ...SECRETS, FOGHORN_DATA_DIR: dataDir } });
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    decoy?.kill('SIGKILL');
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(root, { recursive: true, force: true });
  });

  /** `/sh <command>` in a chat; the final reply's text. */
  const sh = async (command: string, chatId = 'c-sandbox'): Promise<string> => {
    const reply = await gw.reply(
      await gw.send({ chat_id: chatId, user_id: 'mallory', text: `/sh ${command}` }),
      60_000,
    );
    expect(reply.body.kind).toBe('final');
    return reply.body.text;
  };
  const ending = (text: string) => text.split('\n').at(-1);

  it('holds real secrets in the worker configuration and in root processes (the premise)', () => {
    expect(gw.config.FOGHORN_WEBHOOK_SECRET).toBe(GATEWAY_SECRET);
    expect(gw.wf.config).toMatchObject({ FOGHORN_ADMIN_TOKEN: SECRETS.FOGHORN_ADMIN_TOKEN, FOGHORN_DATA_DIR: dataDir });
    expect(holders(SECRETS.FOGHORN_ADMIN_TOKEN)).toContain(decoy.pid);
  });

  it("does not reveal secrets through the parent's environment (/proc/$PPID/environ)", async () => {
    const text = await sh('tr "\\0" "\\n" < /proc/$PPID/environ');
    expect(text).not.toContain('FOGHORN_');
    expect(ending(text)).toMatch(/^exit code [1-9]/);
  });

  it('does not reveal secrets through any process environment (cat /proc/*/environ)', async () => {
    const text = await sh('cat /proc/*/environ | tr "\\0" "\\n"; echo; cat /proc/' + decoy.pid + '/environ');
    expect(text).not.toContain('FOGHORN_');
    expect(text).not.toContain('MONGODB');
  });

  it('cannot read or list the data dir (mode 700), while a public file next to it is readable', async () => {
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const cat = await sh(`cat ${dataDir}/admin-token`);
    expect(cat).toMatch(/Permission denied/);
    expect(ending(cat)).toBe('exit code 1');
    const ls = await sh(`ls ${dataDir}`);
    expect(ls).toMatch(/Permission denied/);
    expect(ending(ls)).toBe('exit code 2');
    const control = await sh(`cat ${root}/public.txt`);
    expect(control).toContain('public');
    expect(ending(control)).toBe('exit code 0');
  });

  it('cannot connect to the MongoDB-wire server', async () => {
    const port = Number(new URL(gw.wf.mongo.uri).port);
    // The server is there and answers connections from Foghorn's side.
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => (socket.destroy(), resolve())).once('error', reject);
    });
    const text = await sh(
      `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2); print('connected')"`,
    );
    expect(text).toMatch(/Network is unreachable/);
    expect(text).not.toMatch(/^connected$/m);
    expect(ending(text)).toBe('exit code 1');
  });

  it('runs as the unprivileged user with an empty environment in its own directory', async () => {
    const text = await sh('id -u; id -gn; pwd; env | sort');
    expect(text).toContain(
      [
        '65534',
        'nogroup',
        DEFAULT_SHELL_DIR,
        `HOME=${DEFAULT_SHELL_DIR}`,
        'LANG=C.UTF-8',
        'PATH=/usr/local/bin:/usr/bin:/bin',
        `PWD=${DEFAULT_SHELL_DIR}`,
        '```',
      ].join('\n'),
    );
    expect(text).not.toContain('FOGHORN_');
  });

  it('still runs ordinary commands: echo, ls, uname, a pipeline, exit codes', async () => {
    const text = await sh(
      'echo hello; ls -d /usr/bin; uname -a | cut -d" " -f1; printf "b\\na\\n" | sort | tr "\\n" ,; exit 4',
    );
    expect(text).toContain('hello\n/usr/bin\nLinux\na,b,');
    expect(ending(text)).toBe('exit code 4');
  });

  it('refuses a big allocation (memory limit)', async () => {
    const text = await sh('python3 -c "x = bytearray(4 * 1024 ** 3)"');
    expect(text).toContain('MemoryError');
    expect(ending(text)).toBe('exit code 1');
  });

  it('never sent a secret in any reply, and audited every command without one', async () => {
    const bodies = gw.receiver.delivered().map((c) => JSON.stringify(c.body));
    expect(bodies.length).toBeGreaterThanOrEqual(9);
    for (const body of bodies) for (const secret of SECRET_VALUES) expect(body).not.toContain(secret);
    const audit = await gw.call('GET', '/audit?action=agent.shell&pageSize=100');
    expect(audit.body.items.length).toBeGreaterThanOrEqual(9);
    expect(audit.body.items[0]).toMatchObject({ user: 'webhook:mallory', role: 'operator' });
    const text = JSON.stringify(audit.body);
    for (const secret of SECRET_VALUES) expect(text).not.toContain(secret);
  });

  it('is off with one warning and a clear answer when the sandbox cannot run', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const config = parseConfig({ ...SECRETS, FOGHORN_AGENT_SHELL_USER: 'no-such-shell-user' });
      const tools = () => createAgentToolActivities({ config, client: gw.client, taskQueue: gw.wf.taskQueue });
      const { runAgentTool } = tools();
      tools(); // a second worker in the same process does not warn again
      expect(warn.mock.calls).toEqual([
        [
          'foghorn worker: the agent shell (/sh) is off: the shell user no-such-shell-user (FOGHORN_AGENT_SHELL_USER) does not exist',
        ],
      ]);
      const call: ToolCall = { tool: 'run_shell', args: { command: 'id' } };
      const result = await new MockActivityEnvironment().run(runAgentTool, {
        caller: { chatId: 'c-off', messageId: 'm-off' },
        call,
      });
      expect(result).toEqual({
        error: true,
        text: 'The shell tool is off: the shell user no-such-shell-user (FOGHORN_AGENT_SHELL_USER) does not exist.',
      });
    } finally {
      warn.mockRestore();
    }
  });
});
