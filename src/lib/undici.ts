// undici, imported on first use: loading it costs a start ≈ 150 ms of CPU and ≈ 20 MiB
// (docs/benchmarks.md, branch bundle38), and a start sends nothing through it. Its users
// (outbound requests, the AI gateway's client, the function hosts' connection pools, the npm
// registry check of a function's imports) load it before their first request.
type Undici = typeof import('undici');

let loading: Promise<Undici> | null = null;
let loaded: Undici | null = null;

/** undici, imported on the first call. */
export function loadUndici(): Promise<Undici> {
  loading ??= import('undici').then((m) => (loaded = m));
  return loading;
}

/** undici, for code that runs only after loadUndici() has resolved. */
export function undici(): Undici {
  if (!loaded) throw new Error('undici is not loaded yet: await loadUndici() first');
  return loaded;
}
