import { describe, expect, it } from 'vitest';
import { DENIED_CIDRS, embeddedIPv4Cidrs, isPrivateAddress, ownAddresses } from './net-guard.js';

describe('net-guard', () => {
  it.each([
    // IPv4, as before
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    // IPv6 ranges of the issue
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd00:ec2::254',
    'fdff:ffff::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fec0::1',
    'feff::1',
    'ff02::1',
    'ff00::',
    // IPv4 embedded in IPv6: mapped, NAT64, 6to4
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::10.1.2.3',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    '2002:a00:1::',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '2002:a9fe:a9fe::',
    // Issue 40: IPv4-compatible, local-use NAT64, Teredo, documentation
    '::127.0.0.1',
    '[::127.0.0.1]',
    '::7f00:1',
    '::a9fe:a9fe',
    '::8.8.8.8',
    '64:ff9b:1::a00:1',
    '64:ff9b:1:ffff::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
  ])('denies %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '2001:200::1',
    'fbff::1',
    'fe7f::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '64:ff9c::a00:1',
    '2003:a00:1::',
    'example.com',
    'not an address',
    '',
  ])('allows %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it("denies every address of this machine's interfaces", () => {
    const own = ownAddresses();
    expect(own.length).toBeGreaterThan(0);
    for (const a of own) expect(isPrivateAddress(a), a).toBe(true);
  });

  it('embeds each IPv4 range in the three IPv6 forms', () => {
    expect(embeddedIPv4Cidrs(['10.0.0.0/8'])).toEqual(['::ffff:a00:0/104', '64:ff9b::a00:0/104', '2002:a00:0::/24']);
    expect(DENIED_CIDRS).toEqual(
      expect.arrayContaining(['fc00::/7', 'fe80::/10', 'ff00::/8', '::/128', 'fec0::/10', '10.0.0.0/8']),
    );
  });
});
