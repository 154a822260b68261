import { randomUUID } from 'crypto';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../cli/embedded/mongo';
import { configureAuditKey } from '../../store/audit';
import { configureSecretKey } from '../../store/cluster-secrets';
import { connectMongo, disconnectMongo } from '../../store/connection';

/** The audit key of every test process (the audit writer refuses to append without one). */
export const TEST_AUDIT_KEY = 'test-audit-key-0123456789abcdef0123456789';
/** The key of cluster credentials in every test process (32 bytes, base64), as a process start sets one. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * A real MongoDB-wire server (memory backend) for one test file, with Mongoose connected to a
 * fresh database. Call in beforeAll; the returned stop() goes in afterAll.
 */
export async function useMongo(): Promise<{ server: EmbeddedMongo; uri: string; stop(): Promise<void> }> {
  const server = await startEmbeddedMongo({ database: `test-${randomUUID().slice(0, 8)}` });
  await connectMongo(server.uri);
  configureAuditKey(TEST_AUDIT_KEY);
  configureSecretKey(TEST_SECRET_KEY);
  return {
    server,
    uri: server.uri,
    stop: async () => {
      await disconnectMongo();
      await server.stop();
    },
  };
}
