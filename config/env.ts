import { isIP } from 'net';
import { z } from 'zod';
import { parseDuration } from '../domain/duration';
import { USER_ROLES } from '../domain/roles';
import { parseSlaTargets, SlaError } from '../domain/sla';
import { SIGNAL_TYPES } from '../domain/vocabulary';

/**
 * Every environment variable Foghorn reads, parsed once at start (DESIGN §3–5). A bad value
 * stops the process with one line per bad variable, instead of failing later at first use.
 * Kept out of domain/ so that domain/ (and the workflow bundle built from it) never loads zod.
 */
const port = z.coerce.number().int().min(0).max(65535);
const listenAddress = z
  .string()
  .regex(/^([^:]*):(\d{1,5})$/, 'must look like ":8080" or "127.0.0.1:8080"')
  .transform((text) => {
    const i = text.lastIndexOf(':');
    return { host: text.slice(0, i) || '0.0.0.0', port: Number(text.slice(i + 1)) };
  });

/** A Go duration such as `30s`, parsed to milliseconds. */
const goDuration = z.string().transform((text, ctx) => {
  let ms = 0;
  try {
    ms = parseDuration(text);
  } catch {
    // reported below
  }
  if (!(ms > 0)) {
    ctx.addIssue({ code: 'custom', message: 'must be a positive duration such as 30s or 2m' });
    return z.NEVER;
  }
  return ms;
});

/** `a, b,,c` → ['a', 'b', 'c']: key lists (retired keys, oldest first). */
const commaList = z.string().transform((text) =>
  text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean),
);

/** The embedded MongoDB-wire server's Java heap when it persists to disk (FOGHORN_MONGO_HEAP). */
export const DEFAULT_MONGO_HEAP = '512m';
/** The embedded Temporal dev server's Go memory when it persists to disk (FOGHORN_TEMPORAL_MEMORY). */
export const DEFAULT_TEMPORAL_MEMORY = '320MiB';
/** V8's heap limit for each of the dev worker's isolates, in MiB: a bound on the workflow cache's memory. */
export const DEFAULT_WORKER_HEAP_MIB = 768;

/** Express's names for address ranges, accepted beside addresses and CIDRs in FOGHORN_TRUST_PROXY. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** `10.0.0.0/8`, `::1`, `fd00::/8`, or one of Express's range names. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Which proxies in front of the API may name the caller (X-Forwarded-For), so audit records'
 * `sourceIP` and the rate limit see the caller, not the ingress: `false` (none: the peer
 * address), a hop count (that many proxies, e.g. `1` behind one ingress), or comma-separated
 * addresses, CIDRs and Express's range names (`loopback`, `linklocal`, `uniquelocal`).
 * `true` is refused: it would let any client choose its own `sourceIP`.
 */
const trustProxy = z
  .string()
  .trim()
  .transform((value, ctx): false | number | string[] => {
    if (value === 'false' || value === '0') return false;
    if (/^\d+$/.test(value)) return Number(value);
    const entries = value.split(',').map((e) => e.trim());
    const bad = entries.filter((e) => !isProxyAddress(e));
    if (value === 'true' || bad.length > 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          value === 'true'
            ? "true would let any client choose its sourceIP: give a hop count or the proxies' addresses"
            : `must be false, a hop count, or addresses/CIDRs (loopback, 10.0.0.0/8, …); not ${bad.join(', ')}`,
      });
      return z.NEVER;
    }
    return entries;
  });

export const configSchema = z.object({
  FOGHORN_API_ADDR: listenAddress.default(':8080'),
  FOGHORN_TRUST_PROXY: trustProxy.default('loopback'),
  FOGHORN_BASE_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must start with / and not end with /')
    .default('/api/v1'),
  FOGHORN_ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  // Keys the audit chain (HMAC-SHA-256, docs/audit.md); unset: <FOGHORN_DATA_DIR>/audit-key.
  FOGHORN_AUDIT_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  // Earlier audit keys, oldest first, comma-separated: records and checkpoints they signed still verify.
  FOGHORN_AUDIT_RETIRED_KEYS: commaList
    .pipe(z.array(z.string().min(32, 'each key must be at least 32 characters')))
    .optional(),
  // Encrypts cluster credentials at rest (AES-256-GCM, store/cluster-secrets.ts): 32 bytes as
  // base64 or hex; unset: <FOGHORN_DATA_DIR>/secret-key.
  FOGHORN_SECRET_KEY: z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/,
      'must be 32 bytes as base64 or 64 hex digits (openssl rand -base64 32)',
    )
    .optional(),
  // Earlier secret keys, oldest first, comma-separated: credentials they sealed still open (key rotation).
  FOGHORN_SECRET_RETIRED_KEYS: commaList
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/,
            'each key must be 32 bytes as base64 or 64 hex digits, like FOGHORN_SECRET_KEY',
          ),
      ),
    )
    .optional(),
  FOGHORN_DATA_DIR: z.string().min(1).default('./data'),
  FOGHORN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  FOGHORN_RATE_LIMIT: z.coerce.number().int().min(1).default(600),
  FOGHORN_TASK_QUEUE: z.string().min(1).default('foghorn'),
  FOGHORN_TEMPORAL_PORT: port.default(7233),
  FOGHORN_TEMPORAL_UI_PORT: port.default(8233),
  FOGHORN_MONGO_PORT: port.default(27017),
  FOGHORN_ANNOTATION_PREFIX: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS subdomain such as foghorn.dev')
    .default('foghorn.dev'),
  FOGHORN_LLM_BASE_URL: z.string().url('must be a URL such as http://localhost:11434/v1').optional(),
  FOGHORN_LLM_API_KEY: z.string().optional(),
  FOGHORN_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  FOGHORN_ALERTNAME_MAP: z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object such as {"MyAlert":"HighLatency"}' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.enum(SIGNAL_TYPES)))
    .optional(),
  // Chat gateway, webhook channel (spec webhook-channel.md, DESIGN §10).
  FOGHORN_WEBHOOK_ADDR: listenAddress.optional(),
  FOGHORN_WEBHOOK_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9/_.-]*$/, 'must be a path such as /inbound')
    .default('/inbound'),
  FOGHORN_WEBHOOK_SECRET: z.string().optional(),
  FOGHORN_WEBHOOK_CALLBACK_URL: z.string().url('must be a URL such as https://chat.example.com/foghorn').optional(),
  FOGHORN_WEBHOOK_HOME_CHANNEL: z.string().min(1).optional(),
  FOGHORN_GATEWAY_MAX_AUDIO_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(20 * 1024 * 1024),
  FOGHORN_GATEWAY_ROLE: z.enum(USER_ROLES).default('operator'),
  FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .default('false'),
  FOGHORN_AGENT_SHELL: z.enum(['on', 'off'], { message: 'must be on or off' }).default('on'),
  FOGHORN_AGENT_SHELL_TIMEOUT: goDuration.default('30s'),
  FOGHORN_AGENT_SHELL_DIR: z.string().min(1).optional(),
  // The reconciler (operations/reconcile.ts): how often it runs, and how long a state must be
  // still before it counts as stuck rather than in progress.
  FOGHORN_RECONCILE_INTERVAL: goDuration.default('1m'),
  FOGHORN_RECONCILE_GRACE: goDuration.default('30s'),
  // Memory bounds (docs/benchmarks.md, "Memory under a storm"): workflows a worker keeps cached
  // (an evicted one is replayed from its history when it next runs: the cache must hold a storm's
  // open incidents and their ladders, two workflows each, or replays cascade), and the embedded
  // MongoDB-wire server's Java heap when it persists to disk (`foghorn dev`), reserved up front,
  // and the embedded Temporal's Go memory, where its collector works.
  FOGHORN_WORKFLOW_CACHE: z.coerce.number().int().min(0).default(1000),
  FOGHORN_MONGO_HEAP: z
    .string()
    .regex(/^\d+[mg]$/, 'must be a Java heap size such as 512m or 1g')
    .default(DEFAULT_MONGO_HEAP),
  FOGHORN_TEMPORAL_MEMORY: z
    .string()
    .regex(/^\d+(MiB|GiB)$/, 'must be a Go memory limit such as 320MiB or 1GiB')
    .default(DEFAULT_TEMPORAL_MEMORY),
  // V8's heap limit (--max-old-space-size, MiB) of `foghorn dev`'s worker, for each isolate: the
  // activities' and the workflows' thread, which holds the cache. Without it V8 lets a busy
  // heap grow towards its own default (a quarter of the machine's memory, up to 4 GiB).
  FOGHORN_WORKER_HEAP: z.coerce.number().int().min(256).default(DEFAULT_WORKER_HEAP_MIB),
  // Diagnostics: a directory where each process writes the store commands it has sent, counted
  // (`<pid>.json`, every second; store/command-counts.ts). Unset, nothing is counted.
  FOGHORN_STORE_COMMAND_COUNTS: z.string().min(1).optional(),
  // The sandbox (activities/shell.ts): the unprivileged user commands run as, and their network.
  FOGHORN_AGENT_SHELL_USER: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'must be a user name or uid such as nobody')
    .default('nobody'),
  FOGHORN_AGENT_SHELL_NETWORK: z.enum(['none', 'host'], { message: 'must be none or host' }).default('none'),
  // Cluster watcher: how long a pod may be not ready (or a Deployment short of replicas) before it is a failure.
  FOGHORN_WATCH_NOT_READY_AFTER: goDuration.default('5m'),
  // The change record: how long changes are kept, how many per cluster at most, and how long a
  // Deployment's revision must stay fully available before it counts as healthy.
  FOGHORN_CHANGE_RETENTION: goDuration.default('168h'),
  FOGHORN_CHANGE_MAX_RECORDS: z.coerce.number().int().min(100).default(100_000),
  FOGHORN_REVISION_STABLE_AFTER: goDuration.default('30s'),
  // The remediation engine (DESIGN §8): attempts before escalation, how long a fix is watched
  // before it counts, how long an approval waits, and the plan risk that needs one.
  FOGHORN_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  FOGHORN_VERIFY_WINDOW: goDuration.pipe(z.number().max(30 * 60_000, 'must be at most 30m')).default('2m'),
  FOGHORN_APPROVAL_TTL: goDuration.default('30m'),
  FOGHORN_APPROVAL_RISK_THRESHOLD: z.coerce.number().int().min(0).max(101).default(70),
  // Escalation (docs/escalation.md): policies, schedules and maintenance windows provisioned at
  // start; where PagerDuty events go; the links notifications carry.
  FOGHORN_ESCALATION_FILE: z.string().min(1).optional(),
  FOGHORN_PAGERDUTY_URL: z
    .string()
    .url('must be a URL such as https://events.pagerduty.com/v2/enqueue')
    .default('https://events.pagerduty.com/v2/enqueue'),
  FOGHORN_PUBLIC_URL: z.string().url('must be a URL such as https://foghorn.example.com').optional(),
  FOGHORN_TEMPORAL_UI_URL: z.string().url('must be a URL such as http://localhost:8233').optional(),
  // Compliance report (docs/analytics.md): respond/resolve targets per severity.
  FOGHORN_SLA_TARGETS: z
    .string()
    .transform((text, ctx) => {
      try {
        return parseSlaTargets(text);
      } catch (err) {
        if (!(err instanceof SlaError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
        return z.NEVER;
      }
    })
    .optional(),
  FOGHORN_STT: z.enum(['openai', 'pocketsphinx'], { message: 'must be openai or pocketsphinx' }).optional(),
  FOGHORN_STT_BASE_URL: z.string().url('must be a URL such as http://localhost:8000/v1').optional(),
  FOGHORN_STT_API_KEY: z.string().optional(),
  FOGHORN_STT_MODEL: z.string().min(1).default('whisper-1'),
  TEMPORAL_ADDRESS: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, 'must look like host:7233')
    .optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  // TLS and API keys for a Temporal that needs them (docs/temporal.md), named as in Temporal's
  // own samples. Files are PEM, read at start (cli/temporal-options.ts, which also checks how the
  // settings combine); any of them, or the API key, means TLS.
  TEMPORAL_TLS: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CA_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$/, 'must be a host name such as temporal.example.com')
    .optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must be a URL such as mongodb://host:27017/foghorn')
    .optional(),
});

export type Config = z.infer<typeof configSchema>;

/**
 * Variables that carry secrets. Each may also be given as `<NAME>_FILE` (read by the CLI,
 * cli/config-loader.ts); all are removed from the process environment once parsed, and their
 * values never appear in a configuration error.
 */
export const SECRET_VARIABLES = [
  'FOGHORN_ADMIN_TOKEN',
  'FOGHORN_WEBHOOK_SECRET',
  'FOGHORN_LLM_API_KEY',
  'FOGHORN_STT_API_KEY',
  'FOGHORN_AUDIT_KEY',
  'FOGHORN_AUDIT_RETIRED_KEYS',
  'FOGHORN_SECRET_KEY',
  'FOGHORN_SECRET_RETIRED_KEYS',
  'TEMPORAL_API_KEY',
  'MONGODB_URI', // may carry a password
] as const;
const SECRET_NAMES: ReadonlySet<string> = new Set(SECRET_VARIABLES);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Parses the environment; throws ConfigError listing every bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // An empty variable means unset, as `${VAR:-}` in compose files and CI templates produce.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = configSchema.safeParse(given);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map(
      (issue) =>
        `${issue.path.join('.')}=${SECRET_NAMES.has(String(issue.path[0])) ? '(hidden)' : JSON.stringify(env[String(issue.path[0])])}: ${issue.message}`,
    ),
  );
}

/**
 * The Temporal Web UI's page of Foghorn's namespace (`…/namespaces/<ns>`): notifications and the
 * console link a workflow as `<this>/workflows/<workflow id>`.
 */
export function temporalUiNamespaceUrl(
  config: Pick<Config, 'FOGHORN_TEMPORAL_UI_URL' | 'FOGHORN_TEMPORAL_UI_PORT' | 'TEMPORAL_NAMESPACE'>,
): string {
  const ui = (config.FOGHORN_TEMPORAL_UI_URL ?? `http://localhost:${config.FOGHORN_TEMPORAL_UI_PORT}`).replace(
    /\/$/,
    '',
  );
  return `${ui}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}`;
}
