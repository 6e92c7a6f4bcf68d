// "A function or schedule calling a private URL": the addresses in code and targets that
// point inside the network (localhost, RFC 1918, link-local cloud metadata, .internal names).
import { isIP } from 'node:net';

const PRIVATE_V4: Array<[number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 (carrier-grade NAT)
  [0x7f000000, 8], // 127/8
  [0xa9fe0000, 16], // 169.254/16 (cloud metadata)
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
];

function privateV4(ip: string): boolean {
  const n = ip.split('.').reduce((a, b) => a * 256 + Number(b), 0);
  return PRIVATE_V4.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** Whether a URL's host is private: a loopback, private or link-local address, or an internal name. */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || /\.(localhost|internal|local|lan|home\.arpa)$/.test(h) || h === 'metadata.google.internal') return true;
  if (isIP(h) === 4) return privateV4(h);
  if (isIP(h) === 6) return h === '::1' || h === '::' || /^f[cd]/.test(h) || /^fe[89ab]/.test(h) || (h.startsWith('::ffff:') && privateV4(h.slice(7)));
  return false;
}

/** The private URLs written in a text (code or a target URL). */
export function privateUrls(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/https?:\/\/[^\s'"`<>)\\]+/g)) {
    try {
      if (isPrivateHost(new URL(m[0]).hostname)) found.add(m[0]);
    } catch {
      // not a URL after all
    }
  }
  return [...found];
}

/** The functions' code (the functions store), as a source for the private-URL rule. */
export function functionUrls(db: { query<T>(sql: string): Promise<{ rows: T[] }> }) {
  return {
    kind: 'function',
    list: async () => (await db.query<{ name: string; text: string }>('select slug as name, code as text from functions.functions order by slug')).rows,
  };
}
