import { BlockList, isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DENIED_CIDRS, isPrivateAddress } from './net-guard.js';
import { isPrivateAddress as outboundRefuses } from './outbound.js';

// The rows of IANA's special-purpose address registries: address block, name, "Globally
// Reachable" (true, false, or null for N/A). Sources: "IANA IPv4 Special-Purpose Address
// Registry" (iana.org/assignments/iana-ipv4-special-registry) and "IANA IPv6 Special-Purpose
// Address Registry" (iana.org/assignments/iana-ipv6-special-registry, updated 2025-10-09), as
// published in 2026. A block that is not globally reachable must be denied whole, by one range
// of the guard's list (src/lib/net-guard.ts, which the outbound guard and the function
// sandbox's guard use).
type Row = [block: string, name: string, reachable: boolean | null];

const IPV4: Row[] = [
  ['0.0.0.0/8', '"This network"', false],
  ['0.0.0.0/32', '"This host on this network"', false],
  ['10.0.0.0/8', 'Private-Use', false],
  ['100.64.0.0/10', 'Shared Address Space', false],
  ['127.0.0.0/8', 'Loopback', false],
  ['169.254.0.0/16', 'Link Local', false],
  ['172.16.0.0/12', 'Private-Use', false],
  ['192.0.0.0/24', 'IETF Protocol Assignments', false],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix', false],
  ['192.0.0.8/32', 'IPv4 dummy address', false],
  ['192.0.0.9/32', 'Port Control Protocol Anycast', true],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast', true],
  ['192.0.0.170/32', 'NAT64/DNS64 Discovery', false],
  ['192.0.0.171/32', 'NAT64/DNS64 Discovery', false],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)', false],
  ['192.31.196.0/24', 'AS112-v4', true],
  ['192.52.193.0/24', 'AMT', true],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', null],
  ['192.168.0.0/16', 'Private-Use', false],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service', true],
  ['198.18.0.0/15', 'Benchmarking', false],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)', false],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)', false],
  ['240.0.0.0/4', 'Reserved', false],
  ['255.255.255.255/32', 'Limited Broadcast', false],
];

const IPV6: Row[] = [
  ['::1/128', 'Loopback Address', false],
  ['::/128', 'Unspecified Address', false],
  ['::ffff:0:0/96', 'IPv4-mapped Address', false],
  ['64:ff9b::/96', 'IPv4-IPv6 Translat.', true],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translat.', false],
  ['100::/64', 'Discard-Only Address Block', false],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix', false],
  ['2001::/23', 'IETF Protocol Assignments', false],
  ['2001::/32', 'TEREDO', null],
  ['2001:1::1/128', 'Port Control Protocol Anycast', true],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast', true],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast', true],
  ['2001:2::/48', 'Benchmarking', false],
  ['2001:3::/32', 'AMT', true],
  ['2001:4:112::/48', 'AS112-v6', true],
  ['2001:10::/28', 'Deprecated (previously ORCHID)', false],
  ['2001:20::/28', 'ORCHIDv2', true],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', true],
  ['2001:db8::/32', 'Documentation', false],
  ['2002::/16', '6to4', null],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service', true],
  ['3fff::/20', 'Documentation', false],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs', false],
  ['fc00::/7', 'Unique-Local', false],
  ['fe80::/10', 'Link-Local Unicast', false],
];

/** The first and last address of a block, as text. */
function ends(block: string): [string, string] {
  const [ip, bits] = block.split('/') as [string, string];
  const v6 = isIP(ip) === 6;
  const width = v6 ? 128 : 32;
  const n = v6 ? v6ToBig(ip) : BigInt(ip.split('.').reduce((a, o) => a * 256 + Number(o), 0));
  const host = (1n << BigInt(width - Number(bits))) - 1n;
  const first = n & ~host & ((1n << BigInt(width)) - 1n);
  const last = first | host;
  return v6 ? [bigToV6(first), bigToV6(last)] : [bigToV4(first), bigToV4(last)];
}

function v6ToBig(ip: string): bigint {
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const words = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return words.reduce((a, w) => (a << 16n) | BigInt(parseInt(w || '0', 16)), 0n);
}
const bigToV6 = (n: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
const bigToV4 = (n: bigint) => Array.from({ length: 4 }, (_, i) => Number((n >> BigInt(24 - 8 * i)) & 0xffn)).join('.');

/** Whether one range of the guard's list holds the whole block (both ends in one contiguous range). */
function deniedWhole(block: string): boolean {
  const [first, last] = ends(block);
  const family = isIP(first) === 6 ? 'ipv6' : 'ipv4';
  return DENIED_CIDRS.some((cidr) => {
    const [ip, bits] = cidr.split('/') as [string, string];
    if ((isIP(ip) === 6 ? 'ipv6' : 'ipv4') !== family) return false;
    const one = new BlockList();
    one.addSubnet(ip, Number(bits), family);
    return one.check(first, family) && one.check(last, family);
  });
}

/**
 * Blocks the guard checks by the IPv4 address they carry instead of denying them whole: an
 * IPv4-mapped address is how a dual-stack socket names an IPv4 peer, so ::ffff:8.8.8.8 is
 * 8.8.8.8 (and ::ffff:10.0.0.1 is denied as 10.0.0.1 is).
 */
const CHECKED_AS_IPV4: Record<string, string> = { '::ffff:0:0/96': '::ffff:' };

describe("the guard's ranges against IANA's special-purpose registries", () => {
  it.each(Object.entries(CHECKED_AS_IPV4))('checks %s by the IPv4 address in it', (_block, prefix) => {
    for (const [v4, , reachable] of IPV4) {
      if (reachable !== false) continue;
      for (const a of ends(v4)) expect(isPrivateAddress(`${prefix}${a}`), `${prefix}${a}`).toBe(true);
    }
    expect(isPrivateAddress(`${prefix}8.8.8.8`)).toBe(false);
  });

  it.each([...IPV4, ...IPV6].filter(([block, , reachable]) => reachable === false && !(block in CHECKED_AS_IPV4)))(
    'denies all of %s (%s, not globally reachable)',
    (block) => {
      expect(deniedWhole(block)).toBe(true);
      for (const address of ends(block)) {
        expect(isPrivateAddress(address), address).toBe(true);
        expect(outboundRefuses(address), address).toBe(true);
      }
    },
  );

  it('denies Teredo whole (its IPv4 is obfuscated) and the IPv4-compatible block (not in the registry: deprecated)', () => {
    expect(deniedWhole('2001::/32')).toBe(true);
    expect(deniedWhole('::/96')).toBe(true);
    for (const a of ['::127.0.0.1', '[::127.0.0.1]', '::a9fe:a9fe', '::10.0.0.1'])
      expect(isPrivateAddress(a), a).toBe(true);
  });

  it('passes the globally reachable translation prefixes to a public IPv4, and denies them to a private one', () => {
    for (const a of ['64:ff9b::808:808', '2002:808:808::1']) expect(isPrivateAddress(a), a).toBe(false);
    for (const a of ['64:ff9b::7f00:1', '2002:a9fe:a9fe::1', '64:ff9b::c000:201'])
      expect(isPrivateAddress(a), a).toBe(true);
  });

  it('reads every block of the registries as a range (the test data itself is well formed)', () => {
    for (const [block] of [...IPV4, ...IPV6]) {
      const [first, last] = ends(block);
      expect([isIP(first), isIP(last)], block).not.toContain(0);
    }
    expect(ends('2001:db8::/32')).toEqual(['2001:db8:0:0:0:0:0:0', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff']);
    expect(ends('192.0.2.0/24')).toEqual(['192.0.2.0', '192.0.2.255']);
  });
});
