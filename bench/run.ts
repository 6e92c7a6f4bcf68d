// `npm run bench`: every area's benchmark in turn (or the ones named: npm run bench -- auth ai).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The benchmarks run the compiled server, as `npm start` does: build the current source first.
if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

const AREAS = ['start', 'foundation', 'auth', 'mfa', 'oauth', 'database', 'engines', 'embed', 'storage', 'storage-breadth', 'functions', 'ai', 'realtime', 'logs', 'automation', 'mcp'];
const chosen = process.argv.slice(2).length ? process.argv.slice(2) : AREAS;
let failed = 0;
for (const area of chosen) {
  const file = `bench/${area}.ts`;
  if (!existsSync(file)) {
    console.error(`no benchmark ${file}`);
    failed++;
    continue;
  }
  console.log(`\n# ${area}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
