import path from 'node:path';
import { PLINTH, benchDir, cpuMs, freePort, load, processTree, spawnServer } from './lib.js';
const ADMIN_KEY = `ik_${'b'.repeat(64)}`;
const work = benchDir('probe-');
const port = await freePort();
const extra = process.env.PROBE_ENV ? JSON.parse(process.env.PROBE_ENV) : {};
const plinth = await spawnServer(PLINTH.cmd, [...(process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF}`] : []), ...PLINTH.args], {
  env: { DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'warn', RATE_LIMIT_PLAN: 'off', ADMIN_API_KEY: ADMIN_KEY, PORT: String(port), ...extra }, port, readyPath: '/api/health' });
await fetch(`${plinth.url}/api/storage/buckets`, { method: 'POST', headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ bucketName: 'bench', isPublic: true }) });
const put = await fetch(`${plinth.url}/api/storage/buckets/bench/objects/small/get.bin`, { method: 'PUT', headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/octet-stream' }, body: 'x'.repeat(4096) });
console.log('put', put.status);
if (process.env.PROBE_SQL) { const pg = (await import('pg')).default; const c = new pg.Client({ connectionString: `postgres://postgres@localhost/plinth?host=${encodeURIComponent(path.join(work, 'data', 'postgres'))}` }); await c.connect(); await c.query(process.env.PROBE_SQL); await c.end(); }
const tree = () => processTree(plinth.pid).filter((p) => p !== plinth.pid);
const cpuTree = () => tree().reduce((s, p) => { try { return s + cpuMs(p); } catch { return s; } }, 0);
for (const what of (process.env.WHAT ?? 'get').split(',')) {
  const p0 = cpuMs(plinth.pid), c0 = cpuTree();
  const lua = what === 'put' ? `local n=0 request=function() n=n+1 return wrk.format("PUT","/api/storage/buckets/bench/objects/small/put-"..(n%500),{["x-api-key"]="${ADMIN_KEY}",["content-type"]="application/octet-stream"},string.rep("x",4096)) end` : undefined;
  const r = await load({ url: what === 'put' ? plinth.url : `${plinth.url}/api/storage/buckets/bench/objects/small/get.bin`, lua, seconds: 5, connections: what === 'put' ? 8 : 16 });
  const n = r.rps * 5;
  console.log(what, Math.round(r.rps), 'req/s', 'plinth cpu ms/req', ((cpuMs(plinth.pid) - p0) / n).toFixed(3), 'children cpu ms/req', ((cpuTree() - c0) / n).toFixed(3), 'errors', r.errors);
}
await plinth.stop();
