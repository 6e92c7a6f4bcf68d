// Issue 40, item 1: the rule, checked on the catalog of a freshly migrated database so that a
// new definer function, trigger or event trigger that breaks it fails here (docs/security.md):
// no code that runs with superuser rights evaluates a type, cast, operator, function, default or
// table the owner role can create or alter; the owner owns nothing in Plinth's schemas (but
// realtime.messages, the admin's rules); every definer function pins search_path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import type { Queryable } from '../../src/db/types.js';
import { CATALOG_SWEEP, PLINTH_SCHEMAS, sweep } from './sweep.js';

describe.each(backends())('the privilege sweep (%s)', (backend) => {
  let t: TestApp;
  let db: Queryable;
  let owner: string;
  /** The sweep of the database as migrated and used (realtime and a webhook on a table). */
  let swept: Awaited<ReturnType<typeof sweep>>;
  const admin = () => ({ 'x-api-key': t.adminKey });

  beforeAll(async () => {
    t = await startApp(backend);
    db = t.deps.db;
    owner = t.deps.owner.role;
    // Realtime and webhooks on a table of the app, as an app would have them.
    const sql = (query: string) => call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } });
    expect(
      (await sql('create table public.swept (id uuid primary key default gen_random_uuid(), body text)')).status,
    ).toBe(200);
    expect((await call(t, 'POST', '/api/database/tables/swept/realtime', { headers: admin() })).status).toBe(200);
    const hook = await call(t, 'POST', '/api/database/webhooks', {
      headers: admin(),
      body: {
        name: 'sweep',
        table: 'swept',
        events: ['INSERT', 'UPDATE', 'DELETE'],
        url: 'https://hooks.example.com/in',
      },
    });
    expect(hook.status).toBe(201);
    swept = await sweep(db, owner);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists Plinth's schemas from the catalog: every one of them Plinth's, none the owner's to change", async () => {
    const { plinthSchemas } = swept;
    for (const s of PLINTH_SCHEMAS) expect(plinthSchemas).toContain(s);
    expect(plinthSchemas).not.toContain('public');
  });

  it.each(Object.keys(CATALOG_SWEEP))('%s', async (rule) => {
    expect(swept.violations.filter((v) => v.rule === rule).map((v) => v.what)).toEqual([]);
  });

  it('catches a new superuser definer function or trigger that touches what the owner controls', async () => {
    // Made by the superuser the way a careless migration would: each breaks one rule.
    await db.exec(`
      create function public.sweep_probe() returns int language sql as 'select 1';
      create function realtime.bad_definer() returns int language plpgsql security definer as $$ begin return public.sweep_probe(); end $$;
      create function realtime.bad_trigger() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as $$ begin perform to_jsonb(new); return null; end $$;
      create trigger bad after insert on public.swept for each row execute function realtime.bad_trigger();
      create function realtime.bad_event() returns event_trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as $$ begin null; end $$;
      create event trigger bad_event on ddl_command_end execute function realtime.bad_event();
      alter table mcp.tool_calls alter column created_at set default (now() + make_interval(secs => public.sweep_probe()));
      alter function public.sweep_probe() owner to "${owner}";
      alter table realtime.overflow owner to "${owner}";
    `);
    try {
      const { violations } = await sweep(db, owner);
      const seen = violations.map((v) => `${v.rule}: ${v.what}`).join('\n');
      expect(seen).toMatch(/search_path.*realtime\.bad_definer/);
      expect(seen).toMatch(/body.*realtime\.bad_definer.*public\.sweep_probe/);
      expect(seen).toMatch(/trigger bad on public\.swept runs realtime\.bad_trigger/);
      expect(seen).toMatch(/event trigger.*bad_event/);
      expect(seen).toMatch(/depend.*mcp\.tool_calls.*public\.sweep_probe/);
      expect(seen).toMatch(/relation realtime\.overflow is owned by/);
    } finally {
      await db.exec(`
        drop event trigger bad_event;
        drop trigger bad on public.swept;
        alter table realtime.overflow owner to current_user;
        alter table mcp.tool_calls alter column created_at set default now();
        drop function realtime.bad_definer(), realtime.bad_trigger(), realtime.bad_event(), public.sweep_probe();
      `);
    }
    expect((await sweep(db, owner)).violations).toEqual([]);
  });
});
