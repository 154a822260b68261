import { fingerprint } from './fingerprint';

/**
 * A number in [0, 1) fixed by `key` and spread evenly over keys, however alike (names that differ
 * in their last digit): the fingerprint's FNV-1a moves its high bits little for a change at the
 * end of the text, so its bits go through MurmurHash3's 64-bit finalizer first. Pure JavaScript,
 * for workflow code (e.g. to spread work that would otherwise happen at the same moment).
 */
export function hashFraction(key: string): number {
  const MASK = 0xffffffffffffffffn;
  let k = BigInt(`0x${fingerprint(key)}`);
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK;
  k ^= k >> 33n;
  return Number(k >> 11n) / 2 ** 53;
}
