import mongoose from 'mongoose';
import './models';
import { countCommands } from './command-counts';
import { migrateStore } from './migrations';

const CONNECT_OPTIONS = { serverSelectionTimeoutMS: 5_000, autoIndex: false, autoCreate: false };

/**
 * One Mongoose connection per process. Commands are not buffered while disconnected: a request
 * during an outage fails fast (→ 503) instead of hanging until a timeout.
 */
export async function connectMongo(uri: string, opts: { countCommandsIn?: string } = {}): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  mongoose.set('bufferCommands', false);
  await mongoose.connect(uri, { ...CONNECT_OPTIONS, ...(opts.countCommandsIn && { monitorCommands: true }) });
  if (opts.countCommandsIn) stopCounting = countCommands(mongoose.connection, opts.countCommandsIn);
  // Indexes are created explicitly so a unique index exists before the first concurrent write;
  // that creates the collections too (Mongoose's own autoCreate raced it on a fresh store).
  await Promise.all(Object.values(mongoose.models).map((model) => model.createIndexes()));
  await migrateStore();
  return mongoose;
}

export function mongoReady(): boolean {
  return mongoose.connection.readyState === mongoose.ConnectionStates.connected;
}

export async function disconnectMongo(): Promise<void> {
  clearInterval(watchdog);
  watchdog = undefined;
  stopCounting?.();
  stopCounting = undefined;
  await mongoose.disconnect();
}

let stopCounting: (() => void) | undefined;

/** How long a long-running process's connection may stay down while the server answers others. */
const STUCK_AFTER_MS = 30_000;
let watchdog: NodeJS.Timeout | undefined;

/**
 * Replaces this process's connection when it has stayed down for `stuckAfterMs` although a new
 * connection to the same server answers a ping. The crash test once left one process's driver
 * reporting the same closed connection for three minutes after the embedded server was killed
 * and restarted, while the worker's driver, talking to the same server, had recovered: nothing
 * but a new client would have brought that process back. `onReplaced` hears of each replacement.
 */
export function watchMongo(
  uri: string,
  onReplaced: (downMs: number) => void,
  { everyMs = 5_000, stuckAfterMs = STUCK_AFTER_MS } = {},
): void {
  clearInterval(watchdog);
  let downSince: number | undefined;
  let checking = false;
  watchdog = setInterval(() => {
    if (mongoReady()) downSince = undefined;
    else downSince ??= Date.now();
    if (downSince === undefined || checking || Date.now() - downSince < stuckAfterMs) return;
    const since = downSince;
    checking = true;
    void replaceIfServerAnswers(uri)
      .then((replaced) => {
        if (!replaced) return;
        downSince = undefined;
        onReplaced(Date.now() - since);
      })
      .catch(() => undefined) // the next round tries again
      .finally(() => (checking = false));
  }, everyMs);
  watchdog.unref();
}

async function replaceIfServerAnswers(uri: string): Promise<boolean> {
  const probe = new mongoose.mongo.MongoClient(uri, { serverSelectionTimeoutMS: 2_000 });
  try {
    await probe.db().command({ ping: 1 });
  } catch {
    return false; // the server is down: the driver reconnects by itself once it is back
  } finally {
    await probe.close().catch(() => undefined);
  }
  await mongoose.connection.close().catch(() => undefined); // not forced: a forced close cannot be reopened
  await mongoose.connect(uri, CONNECT_OPTIONS);
  return true;
}

/** True for the server's duplicate-key error (a unique index refused the write). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * The documents an unordered bulk insert refused; throws when nothing is known of the insert.
 * The driver reports a broken connection as a bulk error too, with the network error's code and
 * no write errors (or those of an earlier batch): nothing is known to be stored then, so it must
 * fail (treating it as "all duplicates" once let a drain dequeue signals whose timeline events
 * were never written: the crash test with MongoDB killed caught it). The server's own refusals
 * give the bulk error the first one's code.
 */
export function refusedDocuments(err: unknown): { index: number; code?: number; errmsg?: string }[] {
  const { code, writeErrors } = err as {
    code?: unknown;
    writeErrors?: { index: number; code?: number; errmsg?: string }[];
  };
  if (!Array.isArray(writeErrors) || writeErrors.length === 0 || writeErrors[0].code !== code) throw err;
  return writeErrors;
}
