import path from 'path';

/** The repository root (works from `cli/` under ts-node and from `dist/cli/` when built). */
export const REPO_ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
export const TOOLS_DIR = path.join(REPO_ROOT, '.tools');
