import type { Config } from '../config/index.js';
import type { Db } from '../db/types.js';
import { denoBinary } from './runtime/deno.js';
import { FunctionLogs } from './logs.js';
import { NO_LOGS, type LogWriter } from '../logs/index.js';
import { HostPool } from './runtime/pool.js';
import { RemoteRuntime } from './runtime/remote.js';
import type { FunctionRuntime } from './runtime/types.js';
import { FunctionService } from './service.js';

export { FunctionService } from './service.js';

/**
 * Builds the functions service. With FUNCTION_RUNTIME_URL the functions run on that remote
 * runtime; otherwise Plinth starts Deno processes itself, lazily on first use, so the
 * server's own start never waits for Deno.
 */
export function buildFunctions(
  config: Readonly<Config>,
  db: Db,
  warn?: (msg: string, extra?: Record<string, unknown>) => void,
  /** The log store: console lines also go there (source functions), beside the function's own log. */
  store: LogWriter = NO_LOGS,
): FunctionService {
  const logs = new FunctionLogs(db, { onError: (err) => warn?.('could not store function logs', { err: String(err) }) });
  const onLog = (id: string, level: string, message: string) => {
    logs.add(id, level, message);
    store.write('functions', level === 'error' || level === 'warn' || level === 'debug' ? level : 'info', message, { functionId: id, console: true });
  };
  const { runtimeUrl, runtimeToken, timeoutMs, memoryMb } = config.functions;
  const runtime: FunctionRuntime = runtimeUrl
    ? new RemoteRuntime({ url: runtimeUrl, token: runtimeToken, timeoutMs })
    : new HostPool({ binary: denoBinary(), memoryMb, timeoutMs, onLog, warn, bridge: { publicUrl: config.publicUrl } });
  return new FunctionService(db, runtime, logs);
}
