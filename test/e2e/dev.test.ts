import { execFileSync, spawn, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { freePort } from '../harness/ports';

/** `foghorn dev` as a newcomer runs it (what `npm start` runs), on free ports and a fresh data dir. */
const CLI = path.join(__dirname, '../../bin/foghorn.js');

interface Running {
  child: ChildProcess;
  output: () => string;
  token: string;
  api: string;
}

function descendants(pid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const found: number[] = [];
  const walk = (p: number) => (children.get(p) ?? []).forEach((c) => (found.push(c), walk(c)));
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function startDev(env: NodeJS.ProcessEnv): Promise<Running> {
  const child = spawn(process.execPath, [CLI, 'dev'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  while (!/Admin token:\s+(\S+)/.test(output)) {
    if (child.exitCode !== null) throw new Error(`foghorn dev exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`foghorn dev did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const token = /Admin token:\s+(\S+)/.exec(output)![1];
  const api = /API:\s+(\S+)/.exec(output)![1];
  return { child, output: () => output, token, api };
}

async function waitReady(api: string): Promise<void> {
  const readyz = new URL('/readyz', api).toString();
  for (let i = 0; i < 120; i++) {
    const status = await fetch(readyz).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('readyz never returned 200');
}

async function sigint(run: Running): Promise<number[]> {
  const kids = descendants(run.child.pid!);
  const exited = new Promise((resolve) => run.child.once('exit', resolve));
  run.child.kill('SIGINT');
  await exited;
  return kids;
}

describe('foghorn dev (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-e2e-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = {
      FOGHORN_DATA_DIR: dataDir,
      FOGHORN_API_ADDR: `127.0.0.1:${await freePort()}`,
      FOGHORN_TEMPORAL_PORT: String(await freePort()),
      FOGHORN_TEMPORAL_UI_PORT: String(await freePort()),
      FOGHORN_MONGO_PORT: String(await freePort()),
      FOGHORN_LOG_LEVEL: 'warn',
      FOGHORN_ADMIN_TOKEN: '',
      MONGODB_URI: '',
      TEMPORAL_ADDRESS: '',
    };
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts the whole stack, serves the API with the printed token, stops cleanly and keeps its data', async () => {
    const first = await startDev(env);
    let created: string;
    try {
      await waitReady(first.api);
      const auth = { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' };
      const res = await fetch(`${first.api}/tokens`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ user: 'e2e', role: 'viewer' }),
      });
      expect(res.status).toBe(201);
      created = ((await res.json()) as { token: string }).token;
      const runbooks = await fetch(`${first.api}/runbooks`, { headers: auth }).then(
        (r) => r.json() as Promise<{ metadata: { totalCount: number } }>,
      );
      expect(runbooks.metadata.totalCount).toBeGreaterThanOrEqual(6);
      expect(first.output()).toMatch(/Temporal UI:\s+http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      const kids = await sigint(first);
      expect(kids.length).toBeGreaterThanOrEqual(2); // the Temporal dev server and the MongoDB-wire server
      expect(kids.filter(alive)).toEqual([]);
    }

    const second = await startDev(env);
    try {
      expect(second.token).toBe(first.token); // the generated admin token is kept under the data dir
      await waitReady(second.api);
      const res = await fetch(`${second.api}/runbooks`, { headers: { authorization: `Bearer ${created!}` } });
      expect(res.status).toBe(200); // the token created before the restart is still there
    } finally {
      const kids = await sigint(second);
      expect(kids.filter(alive)).toEqual([]);
    }
  }, 300_000);
});
