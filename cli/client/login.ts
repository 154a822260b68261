import { Command } from 'commander';
import { text } from 'stream/consumers';
import { apiBaseOf, configFile, saveLogin } from './config';
import { clientCommand, reportFailures, whoami } from './command';
import { ClientError } from './errors';
import { ApiClient } from './http';

/**
 * `foghorn login`: checks the token with GET /whoami, then saves the server and the token in
 * ~/.config/foghorn/config.yaml (0600), which later commands use when neither a flag nor the
 * environment says otherwise.
 */
export function loginCommand(): Command {
  return clientCommand('login', 'check a token and save it with the server URL for later commands', { output: false })
    .option('--token-stdin', 'read the token from standard input (keeps it out of the process list)')
    .action((opts: { url?: string; token?: string; tokenStdin?: boolean }) =>
      reportFailures(async () => {
        const url = opts.url || process.env.FOGHORN_URL;
        const token = (opts.tokenStdin ? (await text(process.stdin)).trim() : opts.token) || process.env.FOGHORN_TOKEN;
        if (!url) throw new ClientError('no server: pass --url (or set FOGHORN_URL)');
        if (!token) throw new ClientError('no token: pass --token, --token-stdin, or set FOGHORN_TOKEN');
        const client = new ApiClient({ url, apiBase: apiBaseOf(url), token });
        const identity = await whoami(client);
        const file = configFile();
        await saveLogin({ url, token }, file);
        process.stdout.write(`Logged in to ${url} as ${identity.user} (${identity.role})\n`);
        process.stderr.write(`saved to ${file}\n`);
      }),
    );
}
