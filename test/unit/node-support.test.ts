import { execFileSync, spawnSync } from 'child_process';
import path from 'path';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the launcher's CommonJS helper
const { unsupportedNode } = require('../../tools/node-support.cjs') as {
  unsupportedNode(version?: string): string | undefined;
};

describe('the Node versions Foghorn runs on (package.json engines)', () => {
  it.each(['22.12.0', '22.23.5', '24.22.3', '26.12.1'])('runs on %s', (version) => {
    expect(unsupportedNode(version)).toBeUndefined();
  });

  it.each(['20.20.2', '22.11.0', '18.20.8'])('refuses %s in one line', (version) => {
    expect(unsupportedNode(version)).toBe(
      `Node ${version} is too old: Foghorn needs Node 22.12 or newer (Node 22 or 24 LTS)`,
    );
  });

  it('runs on the Node running this suite', () => {
    expect(unsupportedNode()).toBeUndefined();
  });

  it('the launcher says so and exits 1 on an older Node, before loading anything', () => {
    const launcher = path.join(__dirname, '../../bin/foghorn.js');
    // This Node, told it is 20.20.2 before the launcher runs.
    const old = spawnSync(
      process.execPath,
      [
        '-e',
        `Object.defineProperty(process.versions, 'node', { value: '20.20.2' }); require(${JSON.stringify(launcher)})`,
      ],
      { encoding: 'utf8' },
    );
    expect(old.status).toBe(1);
    expect(old.stderr).toBe(`foghorn: ${unsupportedNode('20.20.2')}\n`);
    expect(execFileSync(process.execPath, [launcher, '--help'], { encoding: 'utf8' })).toContain('Usage: foghorn');
  });
});
