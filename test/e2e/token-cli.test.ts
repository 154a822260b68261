import { execFile } from 'child_process';
import path from 'path';
import { promisify } from 'util';
import { verifyToken } from '../../store/tokens';
import { AuditRecordModel } from '../../store/models';
import { TEST_AUDIT_KEY, useMongo } from '../harness/mongo';

const run = promisify(execFile);
const CLI = path.join(__dirname, '../../bin/foghorn.js');

describe('foghorn token (CLI)', () => {
  let mongo: Awaited<ReturnType<typeof useMongo>>;
  beforeAll(async () => {
    mongo = await useMongo();
  });
  afterAll(() => mongo?.stop());

  const foghorn = (...args: string[]) =>
    run(process.execPath, [CLI, ...args], {
      // The chain's key, as every process of one deployment has it (else it would make one in ./data).
      env: { ...process.env, MONGODB_URI: mongo.uri, FOGHORN_AUDIT_KEY: TEST_AUDIT_KEY },
      timeout: 60_000,
    });

  it('creates, lists and revokes tokens, audited', async () => {
    const created = await foghorn('token', 'create', '--user', 'alice', '--role', 'operator');
    const token = /token: (\S+)/.exec(created.stdout)![1];
    const id = /id:\s+(\S+)/.exec(created.stdout)![1];
    expect(await verifyToken(token)).toMatchObject({ id, user: 'alice', role: 'operator' });

    const listed = await foghorn('token', 'list');
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('alice');
    expect(listed.stdout).not.toContain(token);

    await foghorn('token', 'revoke', id);
    expect(await verifyToken(token)).toBeUndefined();
    const actions = await AuditRecordModel.find({ resource: id }).sort({ seq: 1 }).lean();
    expect(actions.map((a) => a.action)).toEqual(['token.create', 'token.revoke']);
    expect(actions[0]).toMatchObject({ role: 'admin', sourceIP: 'internal', user: expect.stringMatching(/^cli:/) });
  });

  it('refuses an unknown role and a bad environment with a clear message', async () => {
    await expect(foghorn('token', 'create', '--user', 'bob', '--role', 'root')).rejects.toMatchObject({ code: 2 }); // usage
    await expect(
      run(process.execPath, [CLI, 'token', 'list'], {
        env: { ...process.env, MONGODB_URI: 'http://nope', FOGHORN_RATE_LIMIT: 'many' },
      }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/MONGODB_URI[\s\S]*FOGHORN_RATE_LIMIT|FOGHORN_RATE_LIMIT[\s\S]*MONGODB_URI/),
    });
  });
});
