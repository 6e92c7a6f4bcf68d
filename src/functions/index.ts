import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import { readFileSync } from 'node:fs';
import { FunctionBuilder } from './build.js';
import { DenoBundler } from './runtime/bundler.js';
import { denoBinary } from './runtime/deno.js';
import { FunctionLogs } from './logs.js';
import { NO_LOGS, type LogWriter } from '../logs/index.js';
import { HostPool } from './runtime/pool.js';
import { RemoteRuntime } from './runtime/remote.js';
import type { FunctionRuntime } from './runtime/types.js';
import { FunctionService, type FunctionServiceOptions } from './service.js';

export { FunctionService } from './service.js';

/**
 * Builds the functions service. With FUNCTION_RUNTIME_URL the functions run on that remote
 * runtime; otherwise Plinth starts Deno processes itself, lazily on first use, so the
 * server's own start never waits for Deno.
 */
export function buildFunctions(
  config: Readonly<Config>,
  db: Db,
  o: Pick<FunctionServiceOptions, 'onInvoke' | 'credentialFor'> & {
    warn?: (msg: string, extra?: Record<string, unknown>) => void;
    /** The log store: console lines also go there (source functions), beside the function's own log. */
    store?: LogWriter;
    /** The anon key of this instance: every function reads it as ANON_KEY. */
    anonKey?: string;
  } = {},
): FunctionService {
  const { warn, store = NO_LOGS, anonKey } = o;
  const logs = new FunctionLogs(db, {
    onError: (err) => warn?.('could not store function logs', { err: String(err) }),
  });
  const onLog = (id: string, level: string, message: string) => {
    logs.add(id, level, message);
    store.write('functions', level === 'error' || level === 'warn' || level === 'debug' ? level : 'info', message, {
      functionId: id,
      console: true,
    });
  };
  const { runtimeUrl, runtimeToken, timeoutMs, memoryMb } = config.functions;
  const runtime: FunctionRuntime = runtimeUrl
    ? new RemoteRuntime({ url: runtimeUrl, token: runtimeToken, timeoutMs })
    : new HostPool({ binary: denoBinary(), memoryMb, timeoutMs, onLog, warn, bridge: { publicUrl: config.publicUrl } });
  // Every function reads the anon key as ANON_KEY; and, with a remote runtime (which has no bridge
  // to say where Plinth is), PLINTH_URL and INSFORGE_BASE_URL are PUBLIC_URL when that is set.
  const env: Record<string, string> = anonKey ? { ANON_KEY: anonKey } : {};
  if (runtimeUrl && config.publicUrl) env.PLINTH_URL = env.INSFORGE_BASE_URL = config.publicUrl;
  return new FunctionService(db, runtime, logs, builder(config.functions.packages), {
    env,
    onInvoke: o.onInvoke,
    credentialFor: o.credentialFor,
  });
}

/** Bundles imports at deploy with the deno of the npm package, whichever runtime runs the functions. */
function builder(p: Config['functions']['packages']): FunctionBuilder {
  const bundler = new DenoBundler({
    binary: denoBinary(),
    cacheDir: p.cacheDir,
    importHosts: p.importHosts,
    timeoutMs: p.timeoutMs,
    npmRegistry: p.npmRegistry,
    npmToken: p.npmToken,
    npmrc: p.npmrc === null ? null : readFileSync(p.npmrc, 'utf8'),
    proxy: p.proxy,
  });
  return new FunctionBuilder({ bundler, ...p });
}
