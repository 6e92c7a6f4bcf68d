// Plinth function host: one Deno process per warm function, spawned by src/functions/pool.ts.
// It listens on a Unix socket (the only path it may read and write besides the temp dir) and
// runs the function in a Web Worker whose permissions are narrowed further: network as the
// process allows it (public addresses only, via --deny-net), its temp dir, nothing else.
// Plain JavaScript so Deno starts it without a type-check or transpile step.
//
// Protocol (HTTP over the socket):
//   GET  /_plinth/health             200 when the host is up
//   PUT  /_plinth/deploy             JSON {version, code, secrets}: (re)loads the worker;
//                                    200 {ok:true}, or 422 {message} when the module fails to load
//   any  /_plinth/invoke             one invocation; headers x-plinth-runtime-version (must match
//                                    the deployed version, else 409) and x-plinth-runtime-url
//                                    (the URL the function sees); all other headers, the method
//                                    and the body are the function's Request. A thrown error is
//                                    a 500 with x-plinth-runtime-outcome: threw.
// Console output and errors go to stdout as JSON lines {level, message}.

const [socketPath, tmpDir] = Deno.args;
const MAX_LOG_CHARS = 8192;

// Stack traces name the module by its data: URL; show a short name instead.
const DATA_URL = /data:text\/javascript;base64,[A-Za-z0-9+/=]+/g;

function emit(level, message) {
  const text = String(message).replace(DATA_URL, 'function.js').slice(0, MAX_LOG_CHARS);
  const bytes = new TextEncoder().encode(JSON.stringify({ level, message: text }) + '\n');
  for (let n = 0; n < bytes.length; ) n += Deno.stdout.writeSync(bytes.subarray(n));
}

// The worker bootstrap: replaces Deno.env with the function's secrets (the worker has no env
// permission, so the process env stays unreadable), forwards console output, loads the code.
const BOOT = `
let handler = null;
// Request bodies arriving from the host: a chunk is asked for ('bpull') when the function reads.
const bodies = new Map();
// Response bodies being streamed: the host asks for each next chunk ('rpull') when its client
// has taken the previous one, so a slow client never makes the function's output pile up.
const streaming = new Map();
function nextChunk(id) {
  const s = streaming.get(id);
  if (!s) return;
  const p = s.next ?? s.reader.read();
  s.next = null;
  p.then(
    (r) => {
      if (!r.done) return postMessage({ t: 'chunk', id, chunk: r.value });
      streaming.delete(id);
      postMessage({ t: 'end', id });
    },
    () => {
      streaming.delete(id);
      postMessage({ t: 'end', id, failed: true });
    },
  );
}
// Sends the head and, when the body is already complete (a string, bytes, JSON), the whole
// body in one message; a body still being produced follows chunk by chunk.
async function sendResponse(id, res) {
  const head = { t: 'res', id, status: res.status, statusText: res.statusText, headers: [...res.headers] };
  if (!res.body) return postMessage({ ...head, chunks: [], done: true });
  const reader = res.body.getReader();
  const chunks = [];
  for (;;) {
    let r = null;
    const p = reader.read().then((x) => (r = x));
    for (let i = 0; i < 8 && r === null; i++) await null;
    if (r === null) {
      streaming.set(id, { reader, next: p });
      return postMessage({ ...head, chunks, done: false });
    }
    if (r.done) return postMessage({ ...head, chunks, done: true });
    chunks.push(r.value);
  }
}
function fmt(args) {
  return args.map((a) => {
    if (typeof a === 'string') return a;
    if (a instanceof Error) return a.stack ?? String(a);
    try { return Deno.inspect(a, { depth: 4, colors: false }); } catch { return String(a); }
  }).join(' ');
}
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  const name = level === 'log' ? 'info' : level === 'trace' ? 'debug' : level;
  console[level] = (...args) => postMessage({ t: 'log', level: name, message: fmt(args) });
}
self.onmessage = async (e) => {
  const m = e.data;
  if (m.t === 'init') {
    const secrets = Object.freeze({ ...m.secrets });
    const env = Object.freeze({
      get: (k) => (Object.hasOwn(secrets, k) ? secrets[k] : undefined),
      has: (k) => Object.hasOwn(secrets, k),
      toObject: () => ({ ...secrets }),
      set: () => { throw new Deno.errors.NotCapable('Function environment variables are read-only; set them as secrets.'); },
      delete: () => { throw new Deno.errors.NotCapable('Function environment variables are read-only; set them as secrets.'); },
    });
    Object.defineProperty(Deno, 'env', { value: env, configurable: false, writable: false });
    try {
      const mod = await import('data:text/javascript;base64,' + m.code);
      if (typeof mod.default !== 'function') throw new TypeError('The code must export a default async function (req: Request) => Response.');
      handler = mod.default;
      postMessage({ t: 'ready' });
    } catch (err) {
      postMessage({ t: 'loadError', message: String(err?.message ?? err), stack: String(err?.stack ?? err) });
    }
    return;
  }
  if (m.t === 'req') {
    let body = null;
    if (m.stream) {
      body = new ReadableStream({
        pull: (c) => new Promise((resolve) => {
          bodies.set(m.id, { c, resolve });
          postMessage({ t: 'bpull', id: m.id });
        }),
      });
    } else if (m.chunk) body = m.chunk;
    try {
      const req = new Request(m.url, { method: m.method, headers: m.headers, body, duplex: 'half' });
      const res = await handler(req);
      if (!(res instanceof Response)) throw new TypeError('The function must return a Response (got ' + typeof res + ').');
      await sendResponse(m.id, res);
    } catch (err) {
      postMessage({ t: 'err', id: m.id, message: String(err?.message ?? err), stack: String(err?.stack ?? err) });
    }
    return;
  }
  if (m.t === 'rpull') return nextChunk(m.id);
  if (m.t === 'cancel') {
    const s = streaming.get(m.id);
    streaming.delete(m.id);
    s?.reader.cancel().catch(() => {});
    return postMessage({ t: 'end', id: m.id });
  }
  // The next piece of a streamed request body.
  const b = bodies.get(m.id);
  if (!b) return;
  bodies.delete(m.id);
  if (m.t === 'bchunk') b.c.enqueue(m.chunk);
  else if (m.failed) b.c.error(new Error('The request body was cut off.'));
  else b.c.close();
  b.resolve();
};
// Run the request and response machinery once while idle, so the first real call is not
// the one paying for it.
(async () => {
  const req = new Request('http://warm.invalid/', { method: 'POST', headers: [['x', 'y']], body: new Uint8Array(1) });
  await req.arrayBuffer();
  const reader = Response.json({ warm: true }).body.getReader();
  while (!(await reader.read()).done);
  new URL(req.url).searchParams.get('x');
})();
`;
const BOOT_URL = 'data:text/javascript;base64,' + btoa(BOOT);

// Workers by the version they run. A redeploy adds the new one and retires the others,
// which finish the requests they already have, then stop.
const workers = new Map();
let version = null;
let nextId = 1;
const RETIRE_AFTER_MS = 60_000;
const pending = new Map();
// Response bodies still streaming from the worker, by request id: {c, resolve} of the pull
// waiting for the next chunk.
const streams = new Map();
// Request bodies the worker reads from, by request id.
const uploads = new Map();

function endUpload(id) {
  const rd = uploads.get(id);
  uploads.delete(id);
  rd?.cancel().catch(() => {});
}

function b64(text) {
  const bytes = new TextEncoder().encode(text);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// Counts what a worker still owes (answers and streamed bodies); a retired worker stops at 0.
function settle(w) {
  w.open--;
  if (w.retired && w.open <= 0) w.terminate();
}

function retire(w) {
  w.retired = true;
  if (w.open <= 0) return w.terminate();
  setTimeout(() => w.terminate(), RETIRE_AFTER_MS);
}

function newWorker() {
  return new Worker(BOOT_URL, {
    type: 'module',
    deno: {
      permissions: {
        net: 'inherit',
        read: [tmpDir],
        write: [tmpDir],
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
}

// A worker started with the process, before any code arrives: a cold start then only loads
// the function's module. Later redeploys start a fresh worker.
let standby = newWorker();

function deploy({ version: v, code, secrets }) {
  const w = standby ?? newWorker();
  standby = null;
  w.open = 0;
  w.retired = false;
  return new Promise((resolve) => {
    w.onmessage = (e) => {
      const m = e.data;
      if (m.t === 'ready') {
        for (const [old, ow] of workers) {
          workers.delete(old);
          retire(ow);
        }
        workers.set(v, w);
        version = v;
        // Get the next worker ready for a code or secret change, once this one has settled in.
        setTimeout(() => {
          if (workers.get(version) === w && !standby) standby = newWorker();
        }, 1000);
        resolve({ ok: true });
      } else if (m.t === 'loadError') {
        emit('error', m.stack);
        w.terminate();
        resolve({ ok: false, message: m.message });
      } else if (m.t === 'log') emit(m.level, m.message);
      else if (m.t === 'chunk') {
        const s = streams.get(m.id);
        if (!s) return;
        s.c.enqueue(m.chunk);
        s.resolve?.();
        s.resolve = null;
      } else if (m.t === 'end') {
        const s = streams.get(m.id);
        streams.delete(m.id);
        endUpload(m.id);
        if (s) {
          if (m.failed) s.c.error(new Error('The function failed while streaming its response.'));
          else s.c.close();
          s.resolve?.();
        }
        settle(w);
      } else if (m.t === 'bpull') {
        const rd = uploads.get(m.id);
        if (!rd) return w.postMessage({ t: 'bend', id: m.id, failed: true });
        rd.read().then(
          (r) => {
            if (r.done) {
              uploads.delete(m.id);
              w.postMessage({ t: 'bend', id: m.id });
            } else w.postMessage({ t: 'bchunk', id: m.id, chunk: r.value }, [r.value.buffer]);
          },
          () => {
            uploads.delete(m.id);
            w.postMessage({ t: 'bend', id: m.id, failed: true });
          },
        );
      } else if (m.t === 'res' || m.t === 'err') {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (m.t === 'err' || m.done) {
          endUpload(m.id);
          settle(w);
        }
        if (m.t === 'res') p.resolve(m);
        else {
          emit('error', m.stack);
          p.reject(Object.assign(new Error(m.message), { threw: true }));
        }
      }
    };
    // An error the function did not catch outside a request (e.g. in a timer): log it and
    // keep the worker, as Deno.serve would keep serving.
    w.onerror = (e) => {
      e.preventDefault();
      emit('error', e.message);
    };
    // TMPDIR tells the function where it may read and write files.
    w.postMessage({ t: 'init', code: b64(code), secrets: { TMPDIR: tmpDir, ...secrets } });
  });
}

function plain(status, body, headers = {}) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

// Bodies up to this size are read whole and sent in one message; larger ones stream.
const INLINE_BODY = 256 * 1024;

async function invoke(req) {
  const w = workers.get(req.headers.get('x-plinth-runtime-version'));
  if (!w) return plain(409, { message: 'not deployed' }, { 'x-plinth-runtime-outcome': 'not-deployed' });
  const url = req.headers.get('x-plinth-runtime-url');
  if (!url) return plain(400, { message: 'x-plinth-runtime-url is required' });
  const headers = [];
  for (const [k, v] of req.headers) if (!k.startsWith('x-plinth-runtime-')) headers.push([k, v]);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== null;
  const id = nextId++;
  w.open++;
  const result = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  const base = { t: 'req', id, method: req.method, url, headers };
  const length = Number(req.headers.get('content-length') ?? NaN);
  if (!hasBody) w.postMessage(base);
  else if (length <= INLINE_BODY) {
    const chunk = new Uint8Array(await req.arrayBuffer());
    w.postMessage({ ...base, chunk }, [chunk.buffer]);
  } else {
    uploads.set(id, req.body.getReader());
    w.postMessage({ ...base, stream: true });
  }
  try {
    const m = await result;
    let body = null;
    if (m.done) body = m.chunks.length === 1 ? m.chunks[0] : m.chunks.length ? new Blob(m.chunks) : null;
    else {
      body = new ReadableStream({
        start(c) {
          for (const chunk of m.chunks) c.enqueue(chunk);
          streams.set(id, { c, resolve: null });
        },
        pull() {
          const s = streams.get(id);
          if (!s) return;
          return new Promise((resolve) => {
            s.resolve = resolve;
            w.postMessage({ t: 'rpull', id });
          });
        },
        cancel() {
          streams.delete(id);
          w.postMessage({ t: 'cancel', id });
        },
      });
    }
    return new Response(body, { status: m.status, statusText: m.statusText, headers: m.headers });
  } catch (err) {
    return plain(500, undefined, { 'x-plinth-runtime-outcome': err.threw ? 'threw' : 'aborted' });
  }
}

// Plinth holds our stdin open; when it goes away (even killed), stdin ends and so do we.
(async () => {
  for await (const _ of Deno.stdin.readable);
  Deno.exit(0);
})();

Deno.serve(
  { path: socketPath, onListen: () => emit('host', 'listening') },
  async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/_plinth/invoke') return invoke(req);
    if (path === '/_plinth/health') return plain(200, { ok: true, version });
    if (path === '/_plinth/deploy' && req.method === 'PUT') {
      const r = await deploy(await req.json());
      return plain(r.ok ? 200 : 422, r);
    }
    return plain(404, { message: 'unknown host path' });
  },
);
