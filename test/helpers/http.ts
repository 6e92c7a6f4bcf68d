/** Anything a request can be sent through: a TestApp, a configured app, or `at(url)`. */
export interface Target {
  /** fetch against the server; `path` is relative to its base URL. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/**
 * A target for a server that is not a TestApp (a spawned process, a signed URL): paths are
 * appended to `base`, so `call(at(url), 'GET', '')` asks for `url` itself.
 */
export function at(base: string | URL): Target {
  return { fetch: (p, init) => fetch(String(base) + p, init) };
}

export interface Answer {
  status: number;
  /** The body parsed as JSON; the text when it is not JSON; null when empty. */
  body: any;
  text: string;
  headers: Headers;
}

export interface Ask {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as given; a string is sent as application/json unless a header says otherwise. */
  raw?: string | Uint8Array | ReadableStream<Uint8Array> | Blob | FormData;
  headers?: Record<string, string>;
  /** Sent as a bearer token. */
  token?: string;
  signal?: AbortSignal;
}

/** The request call() sends, answered with the Response unread: for a test that reads the body as a stream or as bytes. */
export function send(t: Target, method: string, path: string, opts: Ask = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: RequestInit['body'];
  if (opts.raw !== undefined) body = opts.raw as RequestInit['body'];
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (typeof body === 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  // A stream body must say that the response may start before it ends (undici insists).
  const duplex = body instanceof ReadableStream ? { duplex: 'half' } : {};
  return t.fetch(path, { method, headers, body, signal: opts.signal, ...duplex } as RequestInit);
}

/** A request against a test server, its body read whole: `body` is sent as JSON, `raw` as given, `token` as a bearer token. */
export async function call(t: Target, method: string, path: string, opts: Ask = {}): Promise<Answer> {
  const r = await send(t, method, path, opts);
  const text = await r.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: r.status, body: parsed, text, headers: r.headers };
}
