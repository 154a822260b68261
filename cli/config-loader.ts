import { readFileSync } from 'fs';
import { ConfigError, parseConfig, SECRET_VARIABLES, type Config } from '../config/env';

type Env = Record<string, string | undefined>;

/**
 * Resolves `<NAME>_FILE` for every secret variable (config/env.ts SECRET_VARIABLES): the
 * file's trimmed content becomes `<NAME>`. Setting both, an unreadable file or an empty one is a
 * configuration error; no error ever quotes a file's content. Returns a new environment.
 */
export function resolveSecretFiles(env: Env, read: (file: string) => string = (f) => readFileSync(f, 'utf8')): Env {
  const resolved: Env = { ...env };
  const problems: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const fileVar = `${name}_FILE`;
    const file = env[fileVar];
    delete resolved[fileVar];
    if (!file) continue; // empty means unset, as for every variable
    if (env[name]) {
      problems.push(`${name} and ${fileVar} are both set: set only one of them`);
      continue;
    }
    let value: string;
    try {
      value = read(file).trim();
    } catch (err) {
      problems.push(
        `${fileVar}=${JSON.stringify(file)}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      continue;
    }
    if (!value) problems.push(`${fileVar}=${JSON.stringify(file)}: the file is empty`);
    else resolved[name] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return resolved;
}

/**
 * Removes every secret variable and its `_FILE` variant from `env` (process.env), so no child
 * process inherits them. /proc/<pid>/environ still shows the block the process started with:
 * what protects that is the shell's uid switch (activities/shell.ts), not this.
 */
export function scrubSecretVariables(env: Env): void {
  for (const name of SECRET_VARIABLES) {
    delete env[name];
    delete env[`${name}_FILE`];
  }
}

/** The configuration from the environment (secrets from files where asked), then the secrets scrubbed from it. */
export function loadConfigFromEnv(env: Env = process.env): Config {
  const config = parseConfig(resolveSecretFiles(env));
  scrubSecretVariables(env);
  return config;
}
