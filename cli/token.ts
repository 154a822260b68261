import { Command, Option } from 'commander';
import { USER_ROLES, type UserRole } from '../domain/roles';
import type { Config } from '../config/env';
import { USER_AGENT } from './client/http';

/** Audit fields for actions taken on the machine itself through the CLI. */
const cliSource = {
  user: `cli:${process.env.USER ?? 'unknown'}`,
  role: 'admin' as const,
  sourceIP: 'internal',
  userAgent: USER_AGENT,
};

/** The store's modules, loaded when a token command runs (Mongoose is slow to load). */
const store = async () => ({ ...(await import('../store/tokens')), ...(await import('./services')) });

/** `foghorn token create|list|revoke`: the same operations as the admin API, audited alike. */
export function tokenCommand(config: () => Promise<Config>): Command {
  const token = new Command('token').description('manage API tokens (talks to MongoDB directly)');
  token
    .command('create')
    .requiredOption('--user <user>', 'who the token is for')
    .addOption(new Option('--role <role>', 'what the token may do').choices(USER_ROLES).makeOptionMandatory())
    .action(async (opts: { user: string; role: UserRole }) => {
      const cfg = await config();
      const { auditTokenChange, createToken, ensureAuditKey, withStore } = await store();
      await withStore(cfg, async () => {
        await ensureAuditKey(cfg);
        const { token: value, ...info } = await createToken(opts.user, opts.role);
        await auditTokenChange('token.create', info, cliSource);
        console.log(
          `id:    ${info.id}\nuser:  ${info.user}\nrole:  ${info.role}\ntoken: ${value}\n(shown once: store it now)`,
        );
      });
    });
  token.command('list').action(async () => {
    const cfg = await config();
    const { listTokens, withStore } = await store();
    await withStore(cfg, async () => {
      const { items } = await listTokens(1, 1000);
      for (const t of items) {
        console.log(
          `${t.id}  ${t.role.padEnd(8)} ${t.user.padEnd(24)} ${t.revoked ? 'revoked' : 'active '}  created ${t.createdAt.toISOString()}`,
        );
      }
    });
  });
  token
    .command('revoke')
    .argument('<id>', 'token id (from `token list`)')
    .action(async (id: string) => {
      const cfg = await config();
      const { auditTokenChange, ensureAuditKey, revokeToken, withStore } = await store();
      await withStore(cfg, async () => {
        await ensureAuditKey(cfg);
        const info = await revokeToken(id);
        if (!info) throw new Error(`no token with id ${id}`);
        await auditTokenChange('token.revoke', info, cliSource);
        console.log(`revoked ${id} (${info.user}, ${info.role})`);
      });
    });
  return token;
}
