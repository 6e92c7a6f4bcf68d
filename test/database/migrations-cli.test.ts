// `npm run plinth -- db migrations new | up | list` (the run's build of cli.js, helpers/build.ts)
// in a project folder of its own, against a running server.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { anon } from './helpers.js';
import { builtServer } from '../helpers/build.js';

describe('db migrations CLI', () => {
  let t: TestApp;
  let project: string;
  const cli = (args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> =>
    new Promise((resolve) => {
      const base = { ...process.env };
      delete base.PLINTH_URL;
      delete base.PLINTH_ADMIN_KEY;
      execFile(
        process.execPath,
        [cliJs, ...args],
        { cwd: project, env: { ...base, ...env } },
        (err, stdout, stderr) => {
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
        },
      );
    });
  let cliJs = '';
  beforeAll(async () => {
    cliJs = path.resolve(import.meta.dirname, '../..', await builtServer(), 'cli.js');
    t = await startApp('embedded');
    project = mkdtempSync(path.join(tmpdir(), 'plinth-project-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(project, { recursive: true, force: true });
  });

  it('creates, lists, applies and reports drift', async () => {
    const made = await cli(['db', 'migrations', 'new', 'add_items']);
    expect(made.code, made.out).toBe(0);
    const [file] = readdirSync(path.join(project, 'migrations'));
    expect(file).toMatch(/^\d{14}_add_items\.sql$/);
    const p = path.join(project, 'migrations', file!);
    appendFileSync(
      p,
      "create table public.items (id int primary key, label text);\ngrant select on public.items to anon;\ninsert into public.items values (1, 'one');\n",
    );
    writeFileSync(
      path.join(project, 'migrations', '99990101000000_later.sql'),
      'alter table public.items add column extra int;\n',
    );

    expect((await cli(['db', 'migrations', 'up'])).code).toBe(2); // no server given
    const env = { PLINTH_URL: t.url, PLINTH_ADMIN_KEY: t.adminKey };
    const before = await cli(['db', 'migrations', 'list'], env);
    expect(before.out).toMatch(/pending +\d{14} add_items/);
    const up = await cli(['db', 'migrations', 'up'], env);
    expect(up.code, up.out).toBe(0);
    expect(up.out).toMatch(/applied +\d{14} add_items \(SAFE\)/);
    expect(up.out).toMatch(/applied +99990101000000 later/);
    expect((await call(t, 'GET', '/api/database/records/items', { headers: anon(t) })).body).toEqual([
      { id: 1, label: 'one', extra: null },
    ]);
    const again = await cli(['db', 'migrations', 'up', '--url', t.url, '--key', t.adminKey]);
    expect(again.out).toContain('Nothing to apply');

    appendFileSync(p, '-- edited after it was applied\n');
    const drift = await cli(['db', 'migrations', 'list'], env);
    expect(drift.code).toBe(1);
    expect(drift.out).toMatch(/drift +\d{14} add_items/);
    expect((await cli(['db', 'migrations', 'up'], env)).code).toBe(1);
    const wrongKey = await cli(['db', 'migrations', 'list'], { ...env, PLINTH_ADMIN_KEY: 'nope' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toContain('401');
  });
});
