/**
 * `foghorn dev` started from the TypeScript sources (ts-node, as `npm start` ran before) and from
 * the compiled dist/ (as it runs now): time from spawn to /readyz 200, and the RSS of the Node
 * process once ready and after 100 alerts. Also a one-shot command (`foghorn incidents --help`).
 * Prints one row per run and the medians.
 * Usage: npm run build && npx ts-node --transpile-only bench/compiled-start.ts [runs=3]
 */
import { spawn, spawnSync } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import path from 'path';
import { devEnv, waitReady } from '../test/harness/dev-process';
import { firingAlert } from './fixtures';
import { rssMiB } from './processes';

const ROOT = path.join(__dirname, '..');
const RUNS = Number(process.argv[2] ?? 3);

/** How each mode starts the CLI: the sources through ts-node, or the compiled JavaScript. */
const launcher = path.join(mkdtempSync(path.join(tmpdir(), 'foghorn-launch-')), 'from-sources.js');
writeFileSync(
  launcher,
  `require(${JSON.stringify(require.resolve('ts-node'))}).register({ transpileOnly: true, project: ${JSON.stringify(path.join(ROOT, 'tsconfig.json'))} });\n` +
    `require(${JSON.stringify(path.join(ROOT, 'cli/main.ts'))});\n`,
);
const MODES = { sources: launcher, compiled: path.join(ROOT, 'dist/cli/main.js') };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function run(mode: keyof typeof MODES) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `foghorn-start-${mode}-`));
  const env: NodeJS.ProcessEnv = {
    ...(await devEnv(dataDir)),
    FOGHORN_ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef0123',
  };
  const started = Date.now();
  const child = spawn(process.execPath, [MODES[mode], 'dev'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const api = `http://${env.FOGHORN_API_ADDR}/api/v1`;
    await Promise.race([
      waitReady(api),
      exited.then((code) => Promise.reject(new Error(`foghorn dev (${mode}) exited early: ${code}`))),
    ]);
    const readyMs = Date.now() - started;
    const readyRss = rssMiB(child.pid!);
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${api}/alerts/alertmanager`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.FOGHORN_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(firingAlert('bench', `svc-${i % 10}`, `start-${i}`)),
      });
      if (!res.ok) throw new Error(`alert ${i}: ${res.status}`);
    }
    return { readyMs, readyRss, busyRss: rssMiB(child.pid!) };
  } finally {
    child.kill('SIGINT'); // a no-op when it is gone already
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function oneShot(mode: keyof typeof MODES): number {
  const started = Date.now();
  spawnSync(process.execPath, [MODES[mode], 'incidents', '--help'], { stdio: 'ignore' });
  return Date.now() - started;
}

async function main() {
  const rows: Record<string, { readyMs: number[]; readyRss: number[]; busyRss: number[]; help: number[] }> = {};
  for (let i = 0; i < RUNS; i++) {
    for (const mode of ['sources', 'compiled'] as const) {
      const r = await run(mode);
      const help = oneShot(mode);
      const row = (rows[mode] ??= { readyMs: [], readyRss: [], busyRss: [], help: [] });
      row.readyMs.push(r.readyMs);
      row.readyRss.push(r.readyRss);
      row.busyRss.push(r.busyRss);
      row.help.push(help);
      console.log(
        `${mode.padEnd(9)} run ${i + 1}: ready ${r.readyMs} ms, RSS ${r.readyRss} MiB ready / ${r.busyRss} MiB after 100 alerts, ` +
          `incidents --help ${help} ms (load ${loadavg()[0].toFixed(1)})`,
      );
    }
  }
  console.log('\nmedians:');
  for (const [mode, r] of Object.entries(rows))
    console.log(
      `${mode.padEnd(9)} ready ${median(r.readyMs)} ms · RSS ${median(r.readyRss)} MiB ready, ${median(r.busyRss)} MiB after 100 alerts · incidents --help ${median(r.help)} ms`,
    );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
