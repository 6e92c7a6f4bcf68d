// What a function worker gives the forms functions are written in (src/functions/forms.ts,
// docs/functions.md "Forms a function may take"). Plain JavaScript for Deno: deno-host.js puts
// the source of installForms into each worker, which calls it before it loads the function.
//
// - Deno.serve(handler), Supabase's entry: the handler is kept as the function's entry instead
//   of serving a port (the worker serves calls on its own socket with the real Deno.serve);
// - EdgeRuntime.waitUntil(promise): work that goes on after the response, bounded by the
//   function's time limit, its rejection in the function's logs;
// - encodeBase64 / decodeBase64, which InsForge's runtime has in scope (as Deno's std).

/**
 * Installs the globals; `report.error(message)` logs a line, `report.overtime(limitMs)` is told
 * of waitUntil work still running at the time limit. Returns the real Deno.serve, and the
 * entry of a loaded module (`default ?? handler ?? Deno.serve's handler`).
 */
export function installForms(report) {
  const realServe = Deno.serve.bind(Deno);
  let served = null;
  let loading = true;
  let limitMs = 30_000;
  const pending = new Set();
  const global = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });

  function serve(a, b) {
    if (!loading) throw new TypeError('Deno.serve is the entry of a function: call it once, when the module loads.');
    const handler = typeof a === 'function' ? a : typeof b === 'function' ? b : a?.handler;
    if (typeof handler !== 'function') throw new TypeError('Deno.serve needs a handler: Deno.serve((req) => ...).');
    served = handler;
    const addr = { transport: 'tcp', hostname: '0.0.0.0', port: 8000 };
    return {
      addr,
      finished: new Promise(() => {}),
      shutdown: async () => {},
      ref() {},
      unref() {},
      async [Symbol.asyncDispose]() {},
    };
  }
  Object.defineProperty(Deno, 'serve', { value: serve, writable: true, configurable: true });

  function waitUntil(promise) {
    const work = Promise.resolve(promise);
    const timer = setTimeout(() => report.overtime(limitMs), limitMs);
    pending.add(work);
    work
      .catch((err) => report.error(`EdgeRuntime.waitUntil: ${err?.stack ?? String(err)}`))
      .finally(() => {
        clearTimeout(timer);
        pending.delete(work);
      });
    return work;
  }
  global('EdgeRuntime', Object.freeze({ waitUntil }));

  global('encodeBase64', (data) => {
    const bytes =
      typeof data === 'string'
        ? new TextEncoder().encode(data)
        : data instanceof ArrayBuffer
          ? new Uint8Array(data)
          : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  });
  global('decodeBase64', (b64) => {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  });

  return {
    serve: realServe,
    /** The function's time limit, which also bounds its waitUntil work. */
    limit(ms) {
      if (ms > 0) limitMs = ms;
    },
    /**
     * The entry of the loaded module, or why it has none: {handler} or {problem}. The script form
     * (forms.ts) marks its module, so that its author reads of module.exports.
     */
    entry(mod) {
      loading = false;
      // `default ?? handler ?? Deno.serve's`; a default export of null or undefined with nothing
      // else to take is named as such.
      const [what, value] =
        mod.default != null || ('default' in mod && mod.handler == null && !served)
          ? [mod.__plinthScript ? 'module.exports' : 'The default export', mod.default]
          : 'handler' in mod && mod.handler != null
            ? ['The handler export', mod.handler]
            : ["The function's entry", served ?? undefined];
      if (typeof value === 'function') return { handler: value };
      const kind =
        value === null || value === undefined
          ? String(value)
          : Array.isArray(value)
            ? 'an array'
            : `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`;
      const problem =
        value === undefined && what === "The function's entry"
          ? `${what} is missing; export a default function (or one named handler), assign a function to module.exports, or call Deno.serve with one.`
          : mod.__plinthScript
            ? `${what} is ${kind}; assign it a function that takes a Request and returns a Response.`
            : `${what} is ${kind}; export a default function that takes a Request and returns a Response.`;
      return { problem };
    },
    /** Resolves once the waitUntil work under way has settled (a retired worker waits for it). */
    drain: () => Promise.allSettled([...pending]),
  };
}
