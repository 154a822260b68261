import path from 'path';
import { spawnCli } from '../harness/processes';

/** What one CLI run did: its exit code, and stdout and stderr apart (scripts read stdout only). */
export interface CliResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * Runs `foghorn …` as a child process against `baseUrl`: FOGHORN_URL and FOGHORN_TOKEN set
 * (`token: null` leaves the token out), HOME and XDG_CONFIG_HOME under `home`, `env` on top.
 */
export function cliRunner(defaults: { baseUrl: string; token: string; home: string }) {
  return async (
    args: string[],
    opts: { token?: string | null; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
  ): Promise<CliResult> => {
    const token = opts.token === undefined ? defaults.token : (opts.token ?? '');
    const proc = spawnCli(args, {
      FOGHORN_URL: defaults.baseUrl,
      FOGHORN_TOKEN: token,
      HOME: defaults.home,
      XDG_CONFIG_HOME: path.join(defaults.home, '.config'),
      ...opts.env,
    });
    let stdout = '';
    let stderr = '';
    proc.child.stdout!.on('data', (d) => (stdout += d));
    proc.child.stderr!.on('data', (d) => (stderr += d));
    const closed = new Promise((resolve) => proc.child.once('close', resolve));
    const timer = setTimeout(() => void proc.crash(), opts.timeoutMs ?? 120_000);
    const code = await proc.exited;
    await closed; // every byte of output read
    clearTimeout(timer);
    return { code, stdout, stderr };
  };
}

/** A kubectl-style table as rows of cells (split on runs of blanks: cells of these tests have none). */
export const rowsOf = (table: string): string[][] =>
  table
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.trim().split(/\s+/));
