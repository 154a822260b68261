import { readFileSync } from 'fs';
import { parseDocument } from 'yaml';
import { ConfigError } from '../config/env';
import { describeIssues, escalationFileSchema, type EscalationFile } from '../contracts/escalation';

/**
 * Reads and validates FOGHORN_ESCALATION_FILE (docs/escalation.md). Every problem is one line
 * naming the file and the field (or the line and column of a YAML error), and none quotes the
 * file: it holds webhook URLs, routing keys and signing secrets.
 */
export function loadEscalationFile(path: string): EscalationFile {
  const where = `FOGHORN_ESCALATION_FILE ${path}`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`${where}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0)
    throw new ConfigError(
      doc.errors.map((e) => {
        const at = e.linePos?.[0];
        // The parser's message ends with an excerpt of the file: keep only what went wrong.
        const what = e.message.split(/ at line \d+/)[0];
        return `${where}: ${at ? `line ${at.line}, column ${at.col}: ` : ''}YAML syntax error: ${what}`;
      }),
    );
  // An empty file configures nothing.
  const result = escalationFileSchema.safeParse(doc.toJS() ?? {});
  if (!result.success) throw new ConfigError(describeIssues(result.error).map((line) => `${where}: ${line}`));
  return result.data;
}
