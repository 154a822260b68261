import mongoose, { type mongo } from 'mongoose';
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
  stopHearing?.();
  stopHearing = undefined;
  stopCounting?.();
  stopCounting = undefined;
  await mongoose.disconnect();
}

let stopCounting: (() => void) | undefined;

/** How long a long-running process's connection may stay down while the server answers others. */
const STUCK_AFTER_MS = 30_000;
let watchdog: NodeJS.Timeout | undefined;
let stopHearing: (() => void) | undefined;

/** What a long-running process hears of its connection (watchMongo), to log it. */
export interface MongoWatchEvents {
  /** The driver marked the server unreachable (requests answer 503 until it is back): its reason. */
  lost?(reason: string): void;
  /** The driver reached the server again, `downMs` after it was lost. */
  back?(downMs: number): void;
  /** A new client replaced one that had stopped recovering, `downMs` after it was lost. */
  replaced?(downMs: number): void;
}

/**
 * The driver's reason for the last server it marked unreachable (its description's error). Heard
 * before Mongoose's own listener, which reports the loss as it runs.
 */
function hearDriverReasons(): { reason: () => string; stop: () => void } {
  let last: string | undefined;
  const client = mongoose.connection.getClient();
  const listener = (ev: mongo.ServerDescriptionChangedEvent) => {
    const error = ev.newDescription.error;
    last = error ? `${error.name}: ${error.message}` : undefined; // the newest description's, or none
  };
  client.prependListener('serverDescriptionChanged', listener);
  return {
    reason: () => last ?? 'the driver gave no reason',
    stop: () => client.off('serverDescriptionChanged', listener),
  };
}

/**
 * Tells `events` when this process's connection is lost and when it is back, with the driver's
 * reason: the API answers 503 while it is down, and an operator should see why in its log.
 * And replaces the connection when it has stayed down for `stuckAfterMs` although a new
 * connection to the same server answers a ping. The crash test once left one process's driver
 * reporting the same closed connection for three minutes after the embedded server was killed
 * and restarted, while the worker's driver, talking to the same server, had recovered: nothing
 * but a new client would have brought that process back.
 */
export function watchMongo(
  uri: string,
  events: MongoWatchEvents,
  { everyMs = 5_000, stuckAfterMs = STUCK_AFTER_MS } = {},
): void {
  clearInterval(watchdog);
  stopHearing?.();
  let reasons = hearDriverReasons();
  let lostAt: number | undefined;
  const onLost = () => {
    if (lostAt !== undefined) return;
    lostAt = Date.now();
    events.lost?.(reasons.reason());
  };
  const onBack = () => {
    if (lostAt === undefined) return;
    const downMs = Date.now() - lostAt;
    lostAt = undefined;
    events.back?.(downMs);
  };
  mongoose.connection.on('disconnected', onLost);
  mongoose.connection.on('reconnected', onBack);
  stopHearing = () => {
    reasons.stop();
    mongoose.connection.off('disconnected', onLost);
    mongoose.connection.off('reconnected', onBack);
  };
  let checking = false;
  watchdog = setInterval(() => {
    if (checking) return; // a replacement under way answers for this round
    // The events' own bookkeeping, checked: a state Mongoose reached without its event counts too.
    if (mongoReady()) onBack();
    else onLost();
    if (lostAt === undefined || Date.now() - lostAt < stuckAfterMs) return;
    const since = lostAt;
    checking = true;
    void replaceIfServerAnswers(uri)
      .then((replaced) => {
        if (!replaced) return;
        reasons.stop();
        reasons = hearDriverReasons(); // the new client's
        lostAt = undefined;
        events.replaced?.(Date.now() - since);
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
