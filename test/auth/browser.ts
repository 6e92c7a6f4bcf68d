/**
 * A minimal browser for redirect flows: keeps cookies per host:port (paths ignored, Max-Age=0
 * deletes), follows redirects by hand, and stops when a redirect leaves for the app.
 */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  cookies(url: string): Map<string, string> {
    const host = new URL(url).host;
    if (!this.jar.has(host)) this.jar.set(host, new Map());
    return this.jar.get(host)!;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const jar = this.cookies(url);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    // raw fetch: a browser's request to any host, redirects not followed, the Response handed back as is
    const res = await fetch(url, { redirect: 'manual', headers: { ...headers, ...(cookie ? { cookie } : {}) } });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /**
   * Follows redirects from `url` until one points at `stopAt` (returned, not fetched) or a
   * response is not a redirect (returned as the last response).
   */
  async follow(url: string, stopAt: string): Promise<{ location: string | null; last: Response }> {
    let next = url;
    for (let hops = 0; hops < 20; hops++) {
      const res = await this.get(next);
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { location: null, last: res };
      await res.arrayBuffer();
      next = new URL(location, next).toString();
      if (next.startsWith(stopAt)) return { location: next, last: res };
    }
    throw new Error('too many redirects');
  }
}
