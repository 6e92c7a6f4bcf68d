// The one way the dashboard talks to Plinth: same origin, the admin key from sessionStorage.

const KEY = 'plinth.adminKey';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** A failed call, carrying the error envelope's fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly nextActions: string,
    readonly position?: { line: number; column: number },
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Sent as is (FormData, Blob); `body` is sent as JSON. */
  raw?: BodyInit;
  headers?: Record<string, string>;
  key?: string;
}

/** Calls the API and returns the response; throws ApiError with the envelope on a 4xx/5xx. */
export async function request(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key ?? session.key();
  if (key) headers['x-api-key'] = key;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const r = await fetch(path, { method: opts.method ?? 'GET', headers, body });
  if (r.ok) return r;
  const text = await r.text();
  let env: Record<string, unknown> = {};
  try {
    env = JSON.parse(text);
  } catch {
    /* not an envelope */
  }
  if (r.status === 401 && !opts.key) window.dispatchEvent(new Event('plinth:signed-out'));
  throw new ApiError(
    r.status,
    String(env.error ?? `HTTP_${r.status}`),
    String(env.message ?? (text.slice(0, 300) || r.statusText)),
    String(env.nextActions ?? ''),
    env.position as ApiError['position'],
  );
}

/** Calls the API and parses the JSON answer (null for an empty body). */
export async function api<T = any>(path: string, opts: CallOptions = {}): Promise<T> {
  const r = await request(path, opts);
  const text = await r.text();
  return (text ? JSON.parse(text) : null) as T;
}

export const enc = encodeURIComponent;

/** An object key with its slashes kept (each segment encoded). */
export const encKey = (key: string) => key.split('/').map(enc).join('/');
