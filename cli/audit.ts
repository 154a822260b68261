import { Command } from 'commander';
import { readFile } from 'fs/promises';
import path from 'path';
import type { FileVerification } from '../domain/audit-export';
import type { Config } from '../config/env';
import { addAuditClientCommands } from './client/audit';

/** Exit codes of verify-file: 0 intact, 1 tampered, 2 cannot verify (not an export, no key). */
const TAMPERED = 1;
const CANNOT_VERIFY = 2;

class CannotVerify extends Error {}

/**
 * The audit keys, oldest first: FOGHORN_AUDIT_RETIRED_KEYS, then FOGHORN_AUDIT_KEY (or _FILE),
 * else the data directory's `audit-key`. Never generates one: a new key verifies nothing.
 */
async function auditKeys(config: Config): Promise<string[]> {
  const retired = config.FOGHORN_AUDIT_RETIRED_KEYS ?? [];
  if (config.FOGHORN_AUDIT_KEY) return [...retired, config.FOGHORN_AUDIT_KEY];
  const file = path.join(path.resolve(config.FOGHORN_DATA_DIR), 'audit-key');
  const key = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!key)
    throw new CannotVerify(
      `no audit key: set FOGHORN_AUDIT_KEY or FOGHORN_AUDIT_KEY_FILE to the key the log was written with (${file} does not exist)`,
    );
  return [...retired, key];
}

async function readExport(file: string): Promise<unknown> {
  const { CSV_HEADER } = await import('../domain/audit-export');
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CannotVerify(`cannot read ${file}: ${err.code ?? err.message}`);
  });
  if (text.startsWith(CSV_HEADER.trimEnd()))
    throw new CannotVerify(
      `${file} is a CSV export: its ten columns do not hold the details, user agent and sequence numbers the checksums cover. Export with format=json to verify the chain.`,
    );
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CannotVerify(`${file} is not JSON: ${(err as Error).message}`);
  }
}

function describe(file: string, r: FileVerification): string {
  const lines = [
    `${file}: ${r.intact ? 'intact' : 'NOT INTACT'}`,
    `records: ${r.totalRecords} (${r.verifiedRecords} verified before the first problem, ${r.brokenRecords} broken)`,
    `seal: ${r.sealValid ? 'valid' : 'invalid'}`,
  ];
  if (r.firstBroken)
    lines.push(
      `first broken: row ${r.firstBroken.row}, ${r.firstBroken.id} (seq ${r.firstBroken.seq}): ${r.firstBroken.reason}`,
    );
  for (const m of r.missing) lines.push(`missing: seq ${m.fromSeq}–${m.toSeq}`);
  for (const p of r.problems) lines.push(`problem: ${p}`);
  return lines.join('\n');
}

/**
 * `foghorn audit verify-file FILE`: re-verifies a JSON audit export with the audit key, without
 * the database; `audit list|export|verify` ask the API (cli/client/audit.ts).
 */
export function auditCommand(config: () => Promise<Config>): Command {
  const audit = new Command('audit').description('work with the audit log');
  audit
    .command('verify-file')
    .description(
      'verify a JSON audit export (GET /audit/export?format=json) offline: every record against its checksum and predecessor, gaps, and the seal; exit 0 intact, 1 tampered, 2 cannot verify',
    )
    .argument('<file>', 'the downloaded export')
    .option('--json', 'print the verification as JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      try {
        const keys = await auditKeys(await config());
        const { verifyExportFile } = await import('../contracts/audit');
        const report = verifyExportFile(await readExport(file), keys);
        console.log(opts.json ? JSON.stringify(report, null, 2) : describe(file, report));
        if (!report.intact) process.exitCode = TAMPERED;
      } catch (err) {
        if (!(err instanceof CannotVerify)) throw err;
        console.error(`foghorn audit verify-file: ${err.message}`);
        process.exitCode = CANNOT_VERIFY;
      }
    });
  addAuditClientCommands(audit);
  return audit;
}
