/**
 * Imported first by every benchmark that starts Foghorn: the figures are the compiled product's
 * (`dist/`, as `npm start` runs it). After an edit `bin/foghorn.js` would run the sources through
 * ts-node instead, which starts and restarts at another pace (a chaos run's restarts, and the
 * operator's resolves between them, measured differently on it), so the build is brought up to
 * date here; tools/build.mjs does nothing when it is.
 */
import { execFileSync } from 'child_process';
import path from 'path';

execFileSync(process.execPath, [path.join(__dirname, '..', 'tools', 'build.mjs')], { stdio: 'inherit' });
