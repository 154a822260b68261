/**
 * One rule for what counts as a secret, used wherever data leaves the process for people to
 * read: request logs, error details, audit details. Keys are matched case-insensitively on
 * their name; values are replaced, never partially shown (a prefix of a token still helps an
 * attacker and a suffix helps nobody).
 */
export const REDACTED = '[REDACTED]';

/** Header and field names whose values are secrets wherever they appear. */
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-foghorn-secret|webhook-signature|x-api-key|api[-_]?key|apikey|.*[-_]?(token|secret|password|passwd|credentials?|private[-_]?key)|kubeconfig|client[-_]?(key|certificate)[-_]?data|bearer)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Values that are secrets whatever key they sit under: bearer credentials, our tokens, PEM keys. */
const SECRET_VALUE = [
  /\bBearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /\bfh_[A-Za-z0-9_-]{20,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /\b(client-key-data|client-certificate-data|token):\s*\S+/gi,
];

/** A string with every secret-looking value replaced. */
export function redactText(text: string): string {
  return SECRET_VALUE.reduce((out, re) => out.replace(re, REDACTED), text);
}

/**
 * A deep copy of `value` with secret keys' values and secret-looking strings replaced.
 * Cycles are cut rather than followed.
 */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value;
  if (seen.has(value)) return '[Circular]' as T;
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, seen)) as T;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      isSecretKey(k) && v !== undefined && v !== null && v !== '' ? REDACTED : redact(v, seen),
    ]),
  ) as T;
}
