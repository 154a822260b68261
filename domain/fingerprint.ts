/**
 * FNV-1a 64-bit of a text, as 16 hex digits: a stable fingerprint for "is this the same request
 * again?" (not a security hash). Pure JavaScript so workflow code may use it: Node's crypto is
 * not available in the workflow sandbox.
 */
export function fingerprint(text: string): string {
  const PRIME = 0x100000001b3n;
  const MASK = 0xffffffffffffffffn;
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK;
  }
  return hash.toString(16).padStart(16, '0');
}
