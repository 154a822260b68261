import mongoose from 'mongoose';
import './models';
import { migrateStore } from './migrations';

/**
 * One Mongoose connection per process. Commands are not buffered while disconnected: a request
 * during an outage fails fast (→ 503) instead of hanging until a timeout.
 */
export async function connectMongo(uri: string): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  mongoose.set('bufferCommands', false);
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 5_000, autoIndex: false, autoCreate: false });
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
  await mongoose.disconnect();
}

/** True for the server's duplicate-key error (a unique index refused the write). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
