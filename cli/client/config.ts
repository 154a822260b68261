import { chmod, mkdir, readFile, rename, writeFile } from 'fs/promises';
import os from 'os';
import path from 'path';
import { parse, stringify } from 'yaml';
import { ClientError } from './errors';

/** Where the API is and who calls it. The token is never printed, logged or put in an error. */
export interface ClientSettings {
  /** The server root as given, e.g. http://127.0.0.1:8080 (for messages). */
  url: string;
  /** Absolute base of the API, e.g. http://127.0.0.1:8080/api/v1. */
  apiBase: string;
  token: string;
}

/** `--url` / `--token` of a client command. */
export interface ConnectionFlags {
  url?: string;
  token?: string;
}

/** What `foghorn login` writes. */
export interface SavedLogin {
  url: string;
  token: string;
}

export const DEFAULT_BASE_PATH = '/api/v1';

/** `$XDG_CONFIG_HOME/foghorn/config.yaml`, else `~/.config/foghorn/config.yaml`. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME || os.homedir();
  const base =
    env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(base, 'foghorn', 'config.yaml');
}

/** The saved login, or nothing when there is no file. A file that is not ours is an error. */
export async function readSavedLogin(file = configFile()): Promise<Partial<SavedLogin>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ClientError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    throw new ClientError(`${file} is not valid YAML (run foghorn login again)`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ClientError(`${file} is not a foghorn configuration`);
  const { url, token } = doc as Record<string, unknown>;
  return {
    ...(typeof url === 'string' && url && { url }),
    ...(typeof token === 'string' && token && { token }),
  };
}

/** Writes the login readable by its owner only (0600, its folder 0700), atomically. */
export async function saveLogin(login: SavedLogin, file = configFile()): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const doc = { apiVersion: 'v1', kind: 'FoghornConfig', url: login.url, token: login.token };
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, stringify(doc), { mode: 0o600 });
  await chmod(temp, 0o600); // whatever the umask
  await rename(temp, file);
}

/**
 * The API's base URL: a server root (no path) gets `/api/v1`; a URL with a path is taken as
 * the base itself (an API mounted elsewhere).
 */
export function apiBaseOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ClientError(`invalid server URL ${JSON.stringify(url)} (expected e.g. http://127.0.0.1:8080)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ClientError(`invalid server URL ${JSON.stringify(url)}: only http and https are supported`);
  const pathname = parsed.pathname.replace(/\/+$/, '');
  return `${parsed.origin}${pathname || DEFAULT_BASE_PATH}`;
}

/**
 * Flags beat the environment (FOGHORN_URL, FOGHORN_TOKEN), which beats the saved login; each
 * setting on its own.
 */
export async function resolveSettings(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ClientSettings> {
  const needsFile = !(flags.url ?? env.FOGHORN_URL) || !(flags.token ?? env.FOGHORN_TOKEN);
  const saved = needsFile ? await readSavedLogin(configFile(env)) : {};
  const url = flags.url || env.FOGHORN_URL || saved.url;
  const token = flags.token || env.FOGHORN_TOKEN || saved.token;
  if (!url) throw new ClientError('no server: set FOGHORN_URL, pass --url, or run foghorn login');
  if (!token) throw new ClientError('no token: set FOGHORN_TOKEN, pass --token, or run foghorn login');
  return { url, apiBase: apiBaseOf(url), token };
}
