import fs from 'fs';
import path from 'path';
import { FLOW_BUNDLE_VARIABLE } from './flow-env';

/** The fast layer's globalTeardown: removes the bundle flow-bundle-setup.ts wrote. */
export default function teardown(): void {
  const file = process.env[FLOW_BUNDLE_VARIABLE];
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
