import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { alive } from '../harness/processes';
import { descendants, devEnv, startDev, stopDev, waitReady, type DevProcess } from '../harness/dev-process';

/** Ctrl-C; returns the descendants it had, to check none survived. */
async function sigint(run: DevProcess): Promise<number[]> {
  const kids = descendants(run.child.pid!);
  await stopDev(run);
  return kids;
}

describe('foghorn dev (e2e)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'foghorn-e2e-'));
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = await devEnv(dataDir);
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
