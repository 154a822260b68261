import { Command, InvalidArgumentError, Option } from 'commander';
import { resolveSettings, type ConnectionFlags } from './config';
import { describeFailure, EXIT_FAILED } from './errors';
import { ApiClient } from './http';
import { OUTPUT_FORMATS, type OutputFormat } from './output';

/** Who the token belongs to (GET /whoami). */
export interface Identity {
  user: string;
  role: string;
}

export interface ClientContext<O> {
  client: ApiClient;
  opts: O & ConnectionFlags;
  output: OutputFormat;
  /** The token's user and role, asked once. */
  whoami(): Promise<Identity>;
}

/** A group of client commands (`incidents`, `runbooks`…); main makes their usage errors exit 2. */
export function clientGroup(name: string): Command {
  return new Command(name);
}

/** A client command: `--url`, `--token` and (unless `output: false`) `-o table|wide|json|yaml`. */
export function clientCommand(name: string, description: string, opts: { output?: boolean } = {}): Command {
  const command = new Command(name)
    .description(description)
    .addOption(
      new Option(
        '--url <url>',
        'server root, e.g. http://127.0.0.1:8080 (default: $FOGHORN_URL, then the saved login)',
      ),
    )
    .addOption(new Option('--token <token>', 'bearer token (default: $FOGHORN_TOKEN, then the saved login)'));
  if (opts.output !== false)
    command.addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS).default('table'));
  return command;
}

/** `--page` / `--page-size` of list commands. */
export function withPaging(command: Command): Command {
  return command
    .option('--page <n>', 'page (from 1)', positiveInt)
    .option('--page-size <n>', 'items per page', positiveInt);
}

export function positiveInt(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** The identity behind a client's token. */
export const whoami = (client: ApiClient) => client.get<Identity>('/whoami');

/** Runs `fn`; an API, connection or setup failure is printed on stderr (kubectl style) and exits 1. */
export async function reportFailures(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const message = describeFailure(err);
    if (message === undefined) throw err; // a bug: main prints it
    process.stderr.write(message + '\n');
    process.exitCode = EXIT_FAILED;
  }
}

/**
 * The action of a client command: settings resolved (flags, environment, saved login), the
 * client built, failures reported. Commander passes the arguments, then the options and the
 * command itself.
 */
export function act<O extends object, A extends string[] = []>(
  fn: (ctx: ClientContext<O>, ...args: A) => Promise<void>,
): (...all: unknown[]) => Promise<void> {
  return (...all: unknown[]) =>
    reportFailures(async () => {
      const command = all[all.length - 1] as Command;
      const args = all.slice(0, -2) as A;
      const opts = command.opts<O & ConnectionFlags & { output?: OutputFormat }>();
      const client = new ApiClient(await resolveSettings(opts));
      let identity: Promise<Identity> | undefined;
      await fn({ client, opts, output: opts.output ?? 'table', whoami: () => (identity ??= whoami(client)) }, ...args);
    });
}
