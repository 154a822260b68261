import { writeFileSync } from 'fs';
import path from 'path';
import type mongoose from 'mongoose';

/** Store commands sent by this process so far: `<command> <collection>` → count. */
export type CommandCounts = Record<string, number>;

const WRITE_EVERY_MS = 1_000;

/**
 * Diagnostics (FOGHORN_STORE_COMMAND_COUNTS): counts the commands this process sends the store
 * and writes them to `<dir>/<pid>.json` every second, so a benchmark can say how many commands an
 * incident costs each process (bench/remediation.ts --commands). Needs the client's command
 * monitoring, which costs an event per command: off unless asked for. A connection the watchdog
 * replaced (watchMongo) is not counted: a benchmark's stack does not lose its store.
 */
export function countCommands(connection: mongoose.Connection, dir: string): () => void {
  const counts: CommandCounts = {};
  const client = connection.getClient();
  const onStarted = (event: { commandName: string; command: Record<string, unknown> }) => {
    const collection = event.command[event.commandName];
    const key = typeof collection === 'string' ? `${event.commandName} ${collection}` : event.commandName;
    counts[key] = (counts[key] ?? 0) + 1;
  };
  client.on('commandStarted', onStarted);
  const file = path.join(dir, `${process.pid}.json`);
  const write = () => writeFileSync(file, JSON.stringify(counts));
  const timer = setInterval(write, WRITE_EVERY_MS).unref();
  return () => {
    clearInterval(timer);
    client.off('commandStarted', onStarted);
    write();
  };
}
