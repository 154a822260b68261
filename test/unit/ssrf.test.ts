import { classifyAddress, isIpAddress, refusalReason, type AddressClass } from '../../domain/ssrf';

describe('SSRF address rules', () => {
  const table: [string, AddressClass][] = [
    // IPv4
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['198.51.100.7', 'public'],
    // IPv6
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:10.0.0.5', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.5', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['::127.0.0.1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:4860:4860::8888', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ];

  it.each(table)('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it.each([
    'localhost',
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    'g::1',
    '::ffff:1.2.3.999',
  ])('rejects %j as not an address', (text) => {
    expect(() => classifyAddress(text)).toThrow('not an IP address');
    expect(isIpAddress(text)).toBe(false);
  });

  it('recognises literal addresses', () => {
    expect(['127.0.0.1', '::1', '[fe80::1]', '1:2:3:4:5:6:7:8', '::ffff:1.2.3.4'].map(isIpAddress)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('explains refusals and names the switch where it helps', () => {
    expect(refusalReason('127.0.0.1', false)).toBe(
      'refused: 127.0.0.1 is a loopback address (set FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true to allow)',
    );
    expect(refusalReason('10.0.0.5', false)).toBe(
      'refused: 10.0.0.5 is a private address (set FOGHORN_GATEWAY_ALLOW_PRIVATE_URLS=true to allow)',
    );
    expect(refusalReason('169.254.169.254', false)).toMatch(/^refused: 169\.254\.169\.254 is a link-local address/);
    expect(refusalReason('fd00::1', false)).toMatch(/^refused: fd00::1 is a unique-local address/);
    expect(refusalReason('::ffff:127.0.0.1', false)).toMatch(/^refused: ::ffff:127\.0\.0\.1 is a loopback address/);
    expect(refusalReason('ff02::1', false)).toBe('refused: ff02::1 is a multicast address');
    expect(refusalReason('0.0.0.0', true)).toBe('refused: 0.0.0.0 is an unspecified address');
    expect(refusalReason('nonsense', true)).toBe('refused: nonsense is not an IP address');
  });

  it('lets public addresses through, and local ones only when private URLs are allowed', () => {
    expect(refusalReason('8.8.8.8', false)).toBeUndefined();
    expect(refusalReason('2001:4860:4860::8888', false)).toBeUndefined();
    for (const ip of ['127.0.0.1', '::1', '10.0.0.5', '100.64.0.1', '169.254.169.254', 'fe80::1', 'fd00::1']) {
      expect(refusalReason(ip, false)).toBeDefined();
      expect(refusalReason(ip, true)).toBeUndefined();
    }
    for (const ip of ['224.0.0.1', '255.255.255.255', '::', '0.0.0.0', '100::1']) {
      expect(refusalReason(ip, true)).toBeDefined();
    }
  });
});
