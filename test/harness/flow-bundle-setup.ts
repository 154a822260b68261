import fs from 'fs';
import os from 'os';
import path from 'path';
import { buildWorkflowBundle, FLOW_BUNDLE_VARIABLE } from './flow-env';

/**
 * The fast layer's globalSetup (jest.fast.config.js): Foghorn's workflows bundled once for every
 * file of test/flows/ (a bundle costs seconds of CPU), written to a temporary file whose path the
 * test processes find in FOGHORN_FLOW_BUNDLE. flow-bundle-teardown.ts removes it.
 */
export default async function setup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'foghorn-flows-'));
  const file = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(file, (await buildWorkflowBundle()).code);
  process.env[FLOW_BUNDLE_VARIABLE] = file;
}
