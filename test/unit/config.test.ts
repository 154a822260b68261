import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { loadConfigFromEnv, resolveSecretFiles, scrubSecretVariables } from '../../cli/config-loader';
import { ConfigError, parseConfig, SECRET_VARIABLES } from '../../config/env';

describe('configuration', () => {
  it('has working defaults for an empty environment', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      FOGHORN_API_ADDR: { host: '0.0.0.0', port: 8080 },
      FOGHORN_BASE_PATH: '/api/v1',
      FOGHORN_DATA_DIR: './data',
      FOGHORN_RATE_LIMIT: 600,
      FOGHORN_TEMPORAL_PORT: 7233,
      FOGHORN_TEMPORAL_UI_PORT: 8233,
      TEMPORAL_NAMESPACE: 'default',
    });
    expect(config.MONGODB_URI).toBeUndefined();
    expect(config.TEMPORAL_ADDRESS).toBeUndefined();
  });

  it('treats empty variables as unset', () => {
    expect(parseConfig({ MONGODB_URI: '', FOGHORN_ADMIN_TOKEN: '' }).MONGODB_URI).toBeUndefined();
  });

  it('parses listen addresses and numbers', () => {
    const config = parseConfig({
      FOGHORN_API_ADDR: '127.0.0.1:9000',
      FOGHORN_RATE_LIMIT: '5',
      TEMPORAL_ADDRESS: 'temporal:7233',
    });
    expect(config.FOGHORN_API_ADDR).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(config.FOGHORN_RATE_LIMIT).toBe(5);
    expect(config.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('lists every bad variable at once', () => {
    let error: ConfigError | undefined;
    try {
      parseConfig({
        FOGHORN_API_ADDR: 'eighty',
        FOGHORN_RATE_LIMIT: '-1',
        MONGODB_URI: 'postgres://x',
        FOGHORN_LOG_LEVEL: 'loud',
        FOGHORN_ADMIN_TOKEN: 'short',
      });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems.map((p) => p.split('=')[0]).sort()).toEqual(
      ['FOGHORN_ADMIN_TOKEN', 'FOGHORN_API_ADDR', 'FOGHORN_LOG_LEVEL', 'FOGHORN_RATE_LIMIT', 'MONGODB_URI'].sort(),
    );
    expect(error!.message).toContain('FOGHORN_API_ADDR="eighty"');
  });
});

describe('secrets', () => {
  // The loader reads real files; a fresh directory per run.
  const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const p = `${dir}/${name}`;
    writeFileSync(p, content, { mode: 0o600 });
    return p;
  };
  const TOKEN = 'fh_' + 'a'.repeat(43);

  it('come from <NAME>_FILE (trimmed) as well as <NAME>, for every secret variable', () => {
    const env: Record<string, string | undefined> = {
      FOGHORN_ADMIN_TOKEN_FILE: file('admin', `${TOKEN}\n`),
      FOGHORN_WEBHOOK_SECRET_FILE: file('webhook', '  webhook-secret-value \n'),
      FOGHORN_LLM_API_KEY_FILE: file('llm', 'sk-llm'),
      FOGHORN_STT_API_KEY: 'stt-direct',
      FOGHORN_AUDIT_KEY_FILE: file('audit', 'a'.repeat(64)),
      MONGODB_URI_FILE: file('mongo', 'mongodb://foghorn:pw@db:27017/foghorn\n'),
      FOGHORN_LOG_LEVEL: 'warn',
    };
    const config = loadConfigFromEnv(env);
    expect(config).toMatchObject({
      FOGHORN_ADMIN_TOKEN: TOKEN,
      FOGHORN_WEBHOOK_SECRET: 'webhook-secret-value',
      FOGHORN_LLM_API_KEY: 'sk-llm',
      FOGHORN_STT_API_KEY: 'stt-direct',
      MONGODB_URI: 'mongodb://foghorn:pw@db:27017/foghorn',
      FOGHORN_LOG_LEVEL: 'warn',
    });
    expect(resolveSecretFiles({ FOGHORN_AUDIT_KEY_FILE: file('audit2', 'k'.repeat(64)) })).toEqual({
      FOGHORN_AUDIT_KEY: 'k'.repeat(64),
    });
    // The environment keeps no secret and no _FILE pointer; other variables stay.
    expect(env).toEqual({ FOGHORN_LOG_LEVEL: 'warn' });
  });

  it('are removed from the environment once parsed, so no child process inherits them', () => {
    const env: Record<string, string | undefined> = {
      FOGHORN_ADMIN_TOKEN: TOKEN,
      FOGHORN_WEBHOOK_SECRET: 's',
      FOGHORN_STT_API_KEY_FILE: '',
      PATH: '/usr/bin',
    };
    loadConfigFromEnv(env);
    expect(env).toEqual({ PATH: '/usr/bin' });
    const direct: Record<string, string | undefined> = Object.fromEntries(
      SECRET_VARIABLES.flatMap((n) => [
        [n, 'x'],
        [`${n}_FILE`, '/x'],
      ]),
    );
    scrubSecretVariables(direct);
    expect(direct).toEqual({});
  });

  it('refuse both forms at once, unreadable and empty files, without quoting any secret', () => {
    const env = {
      FOGHORN_ADMIN_TOKEN: TOKEN,
      FOGHORN_ADMIN_TOKEN_FILE: file('admin2', TOKEN),
      FOGHORN_WEBHOOK_SECRET_FILE: `${dir}/missing`,
      FOGHORN_LLM_API_KEY_FILE: file('empty', ' \n'),
    };
    let error: ConfigError | undefined;
    try {
      loadConfigFromEnv(env);
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toEqual([
      'FOGHORN_ADMIN_TOKEN and FOGHORN_ADMIN_TOKEN_FILE are both set: set only one of them',
      `FOGHORN_WEBHOOK_SECRET_FILE="${dir}/missing": cannot read the file (ENOENT)`,
      `FOGHORN_LLM_API_KEY_FILE="${dir}/empty": the file is empty`,
    ]);
    expect(error!.message).not.toContain(TOKEN);
  });

  it('never appear in a configuration error', () => {
    let error: ConfigError | undefined;
    try {
      parseConfig({ FOGHORN_ADMIN_TOKEN: 'short-secret', MONGODB_URI: 'postgres://user:pw@db' });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error!.problems).toEqual([
      'FOGHORN_ADMIN_TOKEN=(hidden): must be at least 32 characters',
      'MONGODB_URI=(hidden): must be a URL such as mongodb://host:27017/foghorn',
    ]);
    expect(error!.message).not.toMatch(/short-secret|pw@db/);
  });

  it('configure the shell sandbox', () => {
    expect(parseConfig({})).toMatchObject({ FOGHORN_AGENT_SHELL_USER: 'nobody', FOGHORN_AGENT_SHELL_NETWORK: 'none' });
    expect(parseConfig({ FOGHORN_AGENT_SHELL_USER: 'sandbox', FOGHORN_AGENT_SHELL_NETWORK: 'host' })).toMatchObject({
      FOGHORN_AGENT_SHELL_USER: 'sandbox',
      FOGHORN_AGENT_SHELL_NETWORK: 'host',
    });
    expect(() => parseConfig({ FOGHORN_AGENT_SHELL_NETWORK: 'bridge' })).toThrow(/must be none or host/);
    expect(() => parseConfig({ FOGHORN_AGENT_SHELL_USER: 'a b' })).toThrow(/must be a user name or uid/);
  });
});
