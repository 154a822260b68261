import { ConfigError, parseConfig } from '../../domain/config';

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
