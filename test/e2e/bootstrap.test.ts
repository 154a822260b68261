import { spawnSync } from 'child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'fs';
import { tmpdir } from 'os';
import path from 'path';

/**
 * `npm start` runs tools/bootstrap.sh: on a machine without the speech packages it must start
 * without apt unless FOGHORN_STT=pocketsphinx asks for them. The machine here has them, so each
 * run gets a PATH of links to everything on it except the speech tools, apt-get and sudo; a
 * stand-in apt-get records what it was asked to do and installs nothing.
 */
const ROOT = path.resolve(__dirname, '../..');
const HIDDEN = new Set(['pocketsphinx_continuous', 'sox', 'espeak-ng', 'apt-get', 'sudo']);
let dir: string;
let bin: string;
let aptLog: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-bootstrap-'));
  bin = path.join(dir, 'bin');
  aptLog = path.join(dir, 'apt.log');
  const machinePath = (process.env.PATH ?? '').split(':').filter(Boolean);
  const seen = new Set<string>();
  mkdirSync(bin);
  for (const d of machinePath) {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const name of names) {
      if (HIDDEN.has(name) || seen.has(name)) continue;
      seen.add(name);
      symlinkSync(path.join(d, name), path.join(bin, name));
    }
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bootstrap(env: NodeJS.ProcessEnv, withApt: boolean) {
  const aptBin = path.join(dir, withApt ? 'apt' : 'no-apt');
  mkdirSync(aptBin, { recursive: true });
  if (withApt) {
    const apt = path.join(aptBin, 'apt-get');
    writeFileSync(apt, `#!/bin/sh\necho "$*" >> ${JSON.stringify(aptLog)}\n`);
    chmodSync(apt, 0o755);
  }
  rmSync(aptLog, { force: true });
  const { FOGHORN_STT: _ignored, ...machine } = process.env;
  const run = spawnSync('bash', [path.join(ROOT, 'tools/bootstrap.sh')], {
    env: { ...machine, ...env, PATH: `${aptBin}:${bin}` },
    encoding: 'utf8',
    timeout: 600_000,
  });
  return {
    status: run.status,
    stderr: run.stderr,
    apt: existsSync(aptLog) ? readFileSync(aptLog, 'utf8') : '',
  };
}

describe('tools/bootstrap.sh on a machine without the speech packages', () => {
  it('asks apt for nothing when voice transcription is off', () => {
    const r = bootstrap({}, true);
    expect(r.stderr).not.toMatch(/apt-get|pocketsphinx/);
    expect(r.apt).toBe('');
    expect(r.status).toBe(0);
  });

  it('asks apt for nothing with FOGHORN_STT=openai', () => {
    const r = bootstrap({ FOGHORN_STT: 'openai' }, true);
    expect(r.apt).toBe('');
    expect(r.status).toBe(0);
  });

  it('says what it installs when FOGHORN_STT=pocketsphinx is switched on', () => {
    const r = bootstrap({ FOGHORN_STT: 'pocketsphinx' }, true);
    expect(r.stderr).toContain(
      'installing pocketsphinx pocketsphinx-en-us sox with apt-get (FOGHORN_STT=pocketsphinx (local voice transcription))',
    );
    expect(r.apt).toMatch(/install -y -qq --no-install-recommends pocketsphinx pocketsphinx-en-us sox\n/);
    // The stand-in installed nothing: the check after apt says so.
    expect(r.stderr).toContain('apt-get finished, yet FOGHORN_STT=pocketsphinx (local voice transcription) is still');
    expect(r.status).not.toBe(0);
  });

  it('says what to install by hand where there is no apt-get', () => {
    const r = bootstrap({ FOGHORN_STT: 'pocketsphinx' }, false);
    expect(r.stderr).toContain(
      'needs the Debian packages pocketsphinx pocketsphinx-en-us sox; apt-get is not available here: install them by hand',
    );
    expect(r.status).not.toBe(0);
  });
});
