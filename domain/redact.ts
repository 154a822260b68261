/**
 * One rule for what counts as a secret, used wherever data leaves the process for people to
 * read: request logs, error details, audit details. Keys are matched case-insensitively on
 * their name; values are replaced, never partially shown (a prefix of a token still helps an
 * attacker and a suffix helps nobody).
 */
export const REDACTED = '[REDACTED]';

/** Header and field names whose values are secrets wherever they appear. */
const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-foghorn-secret|webhook-signature|x-api-key|.*api[-_]?key|apikey|.*[-_]?(token|secret|password|passwd|credentials?|private[-_]?key|secret[-_]?key)|kubeconfig|client[-_]?(key|certificate)[-_]?data|bearer)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Values that are secrets whatever key they sit under: bearer credentials, our tokens, PEM keys. */
const SECRET_VALUE = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi,
  /\bfh_[A-Za-z0-9_-]{20,}/g,
  /\b(sk|whsec)[-_][A-Za-z0-9_-]{16,}/g, // OpenAI-style API keys, Standard Webhooks secrets
  /\bv1,[A-Za-z0-9+/]{20,}={0,2}/g, // Standard Webhooks signatures
  /(?<=\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+(?=@)/gi, // the password of scheme://user:password@host
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** Names that announce a secret inside text: `token: …`, `"apiKey":"…"`, `password=…`, `?access_token=…`. */
const SECRET_NAME =
  'authorization|proxy-authorization|cookie|set-cookie|x-foghorn-secret|webhook-signature|x-api-key|[\\w-]*api[-_]?key|apikey|[\\w-]*(?:token|secret|password|passwd)|client-key-data|client-certificate-data|kubeconfig';
const SECRET_ASSIGNMENT = new RegExp(
  `((?:^|[^\\w-])["']?(?:${SECRET_NAME})["']?\\s*[:=]\\s*)(\\[REDACTED\\]|"[^"]*"|'[^']*'|[^\\s,;&"'}\\]]+)`,
  'gi',
);

/** Secrets this process was given (tokens, keys): replaced wherever they appear, whatever their shape. */
const KNOWN_SECRETS = new Set<string>();
const MIN_KNOWN_SECRET = 8; // shorter values would blank out ordinary words

/** Adds values to the secrets that are replaced wherever they appear (see api/observability.ts). */
export function addKnownSecrets(values: Iterable<string | undefined>): void {
  for (const v of values) if (v && v.length >= MIN_KNOWN_SECRET) KNOWN_SECRETS.add(v);
}

/** A string with every secret-looking value replaced. */
export function redactText(text: string): string {
  let known = text;
  for (const secret of KNOWN_SECRETS) if (known.includes(secret)) known = known.split(secret).join(REDACTED);
  const out = SECRET_VALUE.reduce((t, re) => t.replace(re, REDACTED), known);
  return out.replace(SECRET_ASSIGNMENT, (_m, name: string, value: string) =>
    value === REDACTED
      ? name + value
      : name + (value.startsWith('"') ? `"${REDACTED}"` : value.startsWith("'") ? `'${REDACTED}'` : REDACTED),
  );
}

/**
 * A deep copy of `value` with secret keys' values and secret-looking strings replaced.
 * Cycles are cut rather than followed.
 */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date || ArrayBuffer.isView(value)) return value;
  if (value instanceof Error) {
    // Errors keep what makes them useful (type, message, stack, code, cause), with secrets out.
    const { name, message, stack, ...own } = value as Error & Record<string, unknown>;
    const cause = (value as { cause?: unknown }).cause;
    return redact({ type: name, message, stack, ...own, ...(cause !== undefined && { cause }) }, seen) as T;
  }
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
