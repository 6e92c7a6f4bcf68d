// "A function or schedule calling a private URL": the addresses in code and targets that
// point inside the network (localhost, RFC 1918, link-local cloud metadata, .internal names).
import { isPrivateAddress } from '../lib/net-guard.js';

/** Whether a URL's host is private: a loopback, private or link-local address, or an internal name. */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || /\.(localhost|internal|local|lan|home\.arpa)$/.test(h) || h === 'metadata.google.internal')
    return true;
  return isPrivateAddress(h); // an address in the ranges the sandbox and outbound requests refuse; a name: false
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
    list: async () =>
      (
        await db.query<{ name: string; text: string }>(
          'select slug as name, code as text from functions.functions order by slug',
        )
      ).rows,
  };
}

/** The schedules' HTTP targets, as a source for the private-URL rule. */
export function scheduleUrls(list: () => Promise<Array<{ name: string; functionUrl: string | null }>>) {
  return {
    kind: 'schedule',
    list: async () => (await list()).filter((s) => s.functionUrl).map((s) => ({ name: s.name, text: s.functionUrl! })),
  };
}
