import { type BlockList, isIP } from 'node:net';
import { blockListOf, isPrivateAddress as isDenied } from './net-guard.js';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';

/**
 * Whether an outbound request (a schedule's HTTP target, a webhook delivery) may not reach
 * `address` unless OUTBOUND_ALLOW_HOSTS lists it: the function sandbox's ranges and this
 * machine's own addresses (one list, net-guard.ts); anything that is not an IP address too.
 */
export function isPrivateAddress(address: string): boolean {
  return isIP(address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')) === 0 || isDenied(address);
}

/** An IPv4 address carried in IPv6 (::ffff:a.b.c.d), as IPv4, so an allowed IPv4 range matches it; anything else as it is. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

/** The parsed OUTBOUND_ALLOW_HOSTS: host names, host:port pairs and CIDR ranges. */
export class OutboundPolicy {
  private readonly hosts = new Set<string>();
  private readonly cidrs: BlockList;

  constructor(allow: readonly string[] = []) {
    const cidrs: string[] = [];
    for (const entry of allow.map((e) => e.trim().toLowerCase()).filter(Boolean)) {
      if (entry.includes('/')) cidrs.push(entry);
      else this.hosts.add(entry);
    }
    this.cidrs = blockListOf(cidrs);
  }

  /** Whether `host` (a name or an address, as in the URL) on `port` is listed, or `address` is in a listed range. */
  allows(host: string, port: number, address?: string): boolean {
    const h = host.toLowerCase().replace(/^\[|\]$/g, '');
    if (this.hosts.has(h) || this.hosts.has(`${h}:${port}`)) return true;
    if (address) {
      const a = unmapped(address);
      const family = isIP(a);
      if (family && this.cidrs.check(a, family === 6 ? 'ipv6' : 'ipv4')) return true;
    }
    return false;
  }
}

/** Why a URL may not be called; null when it may (the address is checked again at connect). */
export function refuseUrl(raw: string, policy: OutboundPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not carry a user name or password';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (policy.allows(host, port, isIP(host) ? host : undefined)) return null;
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && isPrivateAddress(host))) {
    return 'points at a private or loopback address; list it in OUTBOUND_ALLOW_HOSTS to allow an internal receiver';
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici dispatcher whose connections only reach public addresses (or listed ones): the
 * check runs on the resolved address at connect time, so a DNS answer that changes between
 * the check and the request (rebinding) cannot reach a private host.
 */
export function guardedDispatcher(policy: OutboundPolicy, opts: { timeoutMs: number }): Dispatcher {
  return new Agent({
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connect: {
      timeout: Math.min(opts.timeoutMs, 10_000),
      lookup(hostname: string, options: object, callback: LookupCallback) {
        dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
          if (err) return callback(err, []);
          const list = addresses as LookupAddress[];
          const port = Number((options as { port?: number }).port ?? 0);
          const ok = list.filter((a) => !isPrivateAddress(a.address) || policy.allows(hostname, port, a.address));
          if (!ok.length) {
            const e: NodeJS.ErrnoException = new Error(
              `${hostname} resolves to a private or loopback address; list it in OUTBOUND_ALLOW_HOSTS to allow it`,
            );
            e.code = 'OUTBOUND_REFUSED';
            return callback(e, []);
          }
          if ((options as { all?: boolean }).all) callback(null, ok);
          else callback(null, ok[0]!.address, ok[0]!.family);
        });
      },
    } as never,
  });
}

export interface OutboundRequest {
  method: string;
  headers: Record<string, string>;
  body: string | null;
  timeoutMs: number;
  /** At most this many bytes of the answer are read (the rest is dropped). */
  maxBodyBytes: number;
}

export interface OutboundAnswer {
  status: number;
  body: string;
}

/** One guarded request: refused before sending when the URL is not allowed, bounded in time and size. */
export async function outboundFetch(
  url: string,
  req: OutboundRequest,
  policy: OutboundPolicy,
  dispatcher: Dispatcher,
): Promise<OutboundAnswer> {
  const refused = refuseUrl(url, policy);
  if (refused) throw new Error(`The URL ${refused}.`);
  const res = await undiciFetch(url, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    redirect: 'manual',
    dispatcher,
    signal: AbortSignal.timeout(req.timeoutMs),
  });
  let body = '';
  if (res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let read = 0;
    while (read < req.maxBodyBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      read += value.byteLength;
      body += decoder.decode(value, { stream: true });
    }
    await reader.cancel().catch(() => {});
  }
  return { status: res.status, body: body.slice(0, req.maxBodyBytes) };
}
