import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

// Addresses code run on behalf of users (functions today; webhooks and schedules later) must
// never reach: this machine, its networks, cloud metadata. One list, one check, built on
// node:net's BlockList (Deno's node:net has the same class: the function sandbox's guard
// checks with the very same list, see src/functions/runtime/deno-net-guard.js).

// Checked against IANA's IPv4 and IPv6 special-purpose address registries (every block they
// mark not globally reachable is in a range below): src/lib/net-guard-iana.test.ts.

/** IPv4 ranges that are not the public internet. */
export const DENIED_IPV4_CIDRS: readonly string[] = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches local listeners
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255
];

/** IPv6 ranges that are not the public internet (those embedding IPv4 are added below). */
export const DENIED_IPV6_CIDRS: readonly string[] = [
  '::/128', // unspecified: reaches local listeners
  '::1/128', // loopback
  '::/96', // IPv4-compatible (deprecated): ::127.0.0.1 reaches loopback on some stacks
  '64:ff9b:1::/48', // local-use NAT64: a network's own translator, the IPv4 anywhere in it
  '100::/64', // discard-only
  '100:0:0:1::/64', // dummy prefix
  '2001::/23', // IETF protocol assignments: Teredo 2001::/32 (its IPv4 obfuscated), benchmarking, ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
  '5f00::/16', // segment routing (SRv6) SIDs
  'fc00::/7', // unique local (fd00:ec2::254 is AWS's metadata)
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated, still routed by some stacks)
  'ff00::/8', // multicast
];

const words = (v4: string): string => {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

/**
 * The IPv6 forms of the denied IPv4 ranges: IPv4-mapped (::ffff:0:0/96), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16, the IPv4 address in bits 16-47).
 */
export function embeddedIPv4Cidrs(v4: readonly string[] = DENIED_IPV4_CIDRS): string[] {
  return v4.flatMap((cidr) => {
    const [ip, bits] = cidr.split('/') as [string, string];
    const n = Number(bits);
    return [`::ffff:${words(ip)}/${96 + n}`, `64:ff9b::${words(ip)}/${96 + n}`, `2002:${words(ip)}::/${16 + n}`];
  });
}

/** Every denied range, IPv4 and IPv6, as CIDR text. */
export const DENIED_CIDRS: readonly string[] = [...DENIED_IPV4_CIDRS, ...DENIED_IPV6_CIDRS, ...embeddedIPv4Cidrs()];

/** This machine's own addresses, of every interface (zone ids removed). Read on each call. */
export function ownAddresses(): string[] {
  const all = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined)
    .map((a) => a.address.replace(/%.*$/, ''));
  return [...new Set(all)];
}

/** A BlockList of the given ranges and single addresses. */
export function blockListOf(cidrs: readonly string[], addresses: readonly string[] = []): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [ip, bits] = cidr.split('/') as [string, string];
    list.addSubnet(ip, Number(bits), isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  }
  for (const a of addresses) list.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

let cached: { list: BlockList; own: string } | null = null;

/**
 * Whether an IP address (v4 or v6, with or without a zone id) is one user code must not
 * reach: a denied range, an IPv4 range embedded in IPv6, or an address of this machine.
 * Not an IP address (a host name): false; resolve it first and check every answer.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return false;
  const own = ownAddresses();
  const key = own.join(',');
  if (cached?.own !== key) cached = { list: blockListOf(DENIED_CIDRS, own), own: key };
  return cached.list.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}
