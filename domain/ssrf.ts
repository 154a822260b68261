/**
 * The SSRF guard's address rules (DESIGN §10): which IP addresses a download from a
 * user-supplied URL may connect to. Pure: the caller resolves names and passes addresses in.
 * Addresses are parsed here (domain/ may not import `net`); anything that does not parse is
 * refused, so the guard fails closed.
 */

export type AddressClass =
  'loopback' | 'private' | 'link-local' | 'unique-local' | 'unspecified' | 'multicast' | 'reserved' | 'public';

/** Classes FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true lets through (local networks, dev setups). */
const ALLOWED_WHEN_PRIVATE: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'link-local', 'unique-local']);

/** `a.b.c.d` in strict dotted decimal, as DNS answers and WHATWG URL hosts are written. */
function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** Eight 16-bit groups; accepts `::` compression, a dotted IPv4 tail and a `%zone` suffix. */
function parseIPv6(text: string): number[] | undefined {
  let rest = text.replace(/^\[(.*)\]$/, '$1');
  const zone = rest.indexOf('%');
  if (zone >= 0) rest = rest.slice(0, zone);
  // A dotted IPv4 tail (`::ffff:127.0.0.1`) becomes its two hex groups.
  const dotted = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(rest);
  if (dotted) {
    const v4 = parseIPv4(dotted[1]!);
    if (v4 === undefined) return undefined;
    rest = `${rest.slice(0, rest.length - dotted[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]!);
  const back = halves.length === 2 ? groups(halves[1]!) : [];
  const words: number[] = [];
  for (const group of [...head, ...back]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    words.push(parseInt(group, 16));
  }
  if (halves.length === 1) return words.length === 8 ? words : undefined;
  if (words.length > 7) return undefined;
  return [...words.slice(0, head.length), ...new Array<number>(8 - words.length).fill(0), ...words.slice(head.length)];
}

const inV4 = (ip: number, base: string, bits: number): boolean => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (ip & mask) >>> 0 === (parseIPv4(base)! & mask) >>> 0;
};

function classifyIPv4(ip: number): AddressClass {
  if (inV4(ip, '0.0.0.0', 8)) return 'unspecified'; // "this network": 0.0.0.0 reaches the local host
  if (inV4(ip, '127.0.0.0', 8)) return 'loopback';
  if (inV4(ip, '10.0.0.0', 8) || inV4(ip, '172.16.0.0', 12) || inV4(ip, '192.168.0.0', 16)) return 'private';
  if (inV4(ip, '100.64.0.0', 10)) return 'private'; // carrier-grade NAT, often cluster-internal
  if (inV4(ip, '169.254.0.0', 16)) return 'link-local'; // includes cloud metadata 169.254.169.254
  if (inV4(ip, '224.0.0.0', 4)) return 'multicast';
  if (inV4(ip, '240.0.0.0', 4)) return 'reserved'; // includes broadcast 255.255.255.255
  if (inV4(ip, '192.0.0.0', 24) || inV4(ip, '198.18.0.0', 15)) return 'reserved'; // IETF, benchmarking
  // Documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24) reach no internal host: public.
  return 'public';
}

function classifyIPv6(w: number[]): AddressClass {
  const [w0, w1, w2, _w3, w4, w5, w6, w7] = w as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => classifyIPv4(((hi << 16) >>> 0) + lo);
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && w7 === 1) return 'loopback';
  if (zeros(0, 5) && w5 === 0xffff) return v4(w6, w7); // IPv4-mapped ::ffff:a.b.c.d
  if (zeros(0, 4) && w4 === 0xffff && w5 === 0) return v4(w6, w7); // IPv4-translated ::ffff:0:a.b.c.d
  if (w0 === 0x64 && w1 === 0xff9b && zeros(2, 6)) return v4(w6, w7); // NAT64 well-known prefix
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return 'private'; // local-use NAT64
  if (w0 === 0x2002) return v4(w1, w2); // 6to4 embeds the IPv4 address it tunnels to
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((w0 & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((w0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((w0 & 0xff00) === 0xff00) return 'multicast';
  if (w0 === 0x2001 && w1 < 0x200) return 'reserved'; // IETF protocol assignments (Teredo, ORCHID…)
  if ((w0 & 0xe000) === 0x2000) return 'public'; // global unicast 2000::/3
  return 'reserved'; // ::/8 leftovers (IPv4-compatible), 100::/64 discard, unassigned space
}

/** What kind of address `ip` is. Throws when it is not an IPv4 or IPv6 address. */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== undefined) return classifyIPv4(v4);
  const v6 = ip.includes(':') ? parseIPv6(ip) : undefined;
  if (v6) return classifyIPv6(v6);
  throw new Error(`not an IP address: ${ip}`);
}

/** True for a literal IPv4 or IPv6 address (brackets allowed), false for a host name. */
export function isIpAddress(text: string): boolean {
  return parseIPv4(text) !== undefined || (text.includes(':') && parseIPv6(text) !== undefined);
}

const ARTICLE: Record<AddressClass, string> = {
  loopback: 'a loopback',
  private: 'a private',
  'link-local': 'a link-local',
  'unique-local': 'a unique-local',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  reserved: 'a reserved',
  public: 'a public',
};

/**
 * Why a download may not connect to `ip`, or undefined when it may. Multicast, reserved and
 * unspecified addresses never serve a file, so the private-URL switch does not open them.
 */
export function refusalReason(ip: string, allowPrivate: boolean): string | undefined {
  let kind: AddressClass;
  try {
    kind = classifyAddress(ip);
  } catch {
    return `refused: ${ip} is not an IP address`;
  }
  if (kind === 'public') return undefined;
  if (ALLOWED_WHEN_PRIVATE.has(kind)) {
    if (allowPrivate) return undefined;
    return `refused: ${ip} is ${ARTICLE[kind]} address (set FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true to allow)`;
  }
  return `refused: ${ip} is ${ARTICLE[kind]} address`;
}
