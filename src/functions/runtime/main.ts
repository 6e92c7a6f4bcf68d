// A standalone function runtime for FUNCTION_RUNTIME_URL (see docs/functions.md):
//   PORT=7131 HOST=10.0.0.5 FUNCTION_RUNTIME_TOKEN=... node dist/functions/runtime/main.js
//   (or from the source: node --import tsx src/functions/runtime/main.ts)
// Function console output goes to stdout as JSON lines.
import { ConfigError, loadConfig, readEnv } from '../../config/index.js';
import { denoBinary } from './deno.js';
import { HostPool } from './pool.js';
import { createRuntimeServer } from './server.js';

let config;
try {
  config = loadConfig(readEnv());
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
const { timeoutMs, memoryMb, runtimeToken } = config.functions;
const pool = new HostPool({
  binary: denoBinary(),
  timeoutMs,
  memoryMb,
  onLog: (functionId, level, message) =>
    process.stdout.write(`${JSON.stringify({ functionId, level, message, time: new Date().toISOString() })}\n`),
  warn: (msg, extra) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...extra })}\n`),
});
const server = createRuntimeServer(pool, runtimeToken);
server.listen(config.port, config.host, () => {
  process.stderr.write(
    `Plinth function runtime listening on ${config.host}:${config.port}${runtimeToken ? '' : ' (no FUNCTION_RUNTIME_TOKEN: keep it on a private network)'}\n`,
  );
});
const stop = () => {
  server.close();
  void pool.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
