// An agent builds an app through MCP only, on a fresh server of each backend: reads the docs,
// creates the tables by a migration (dry run, then apply), writes RLS policies and tries them
// as two users and anon, deploys a function that uses a secret, calls it, schedules it and
// sees the run, reads its logs, runs the advisor and fixes what it finds (each fix a
// migration) until a re-scan finds nothing on its table, generates the client types and
// checks its work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { until } from '../helpers/until.js';
import { mcpClient, type McpClient } from './helpers.js';

const FUNCTION = `
export default async function (req: Request): Promise<Response> {
  const { title } = await req.json();
  console.log('summarize', title);
  return Response.json({ summary: String(title).slice(0, 10), model: Deno.env.get('SUMMARY_MODEL') });
}`;

const NOTES = `create table notes (id uuid primary key default gen_random_uuid(), owner uuid not null default auth.uid() references auth.users(id) on delete cascade, title text not null, created_at timestamptz not null default now());
grant select, insert, update, delete on notes to anon, authenticated;`;

/** The advisor's findings about the notes table, as the scan tool writes them (a block per finding). */
const notesFindings = (scan: string) =>
  scan.split(/\n(?=- \[)/).filter((b) => b.startsWith('- [') && /public\.notes|"notes"/.test(b));

describe.each(backends())('an agent builds a notes app through MCP only (%s)', (backend) => {
  let t: TestApp;
  let agent: McpClient;
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await agent.text(name, args);
    expect(r.isError, `${name}: ${r.text}`).toBe(false);
    return r.text;
  };
  beforeAll(async () => {
    t = await startApp(backend);
    agent = await mcpClient(t);
  });
  afterAll(async () => {
    await agent?.close();
    await t?.close();
  });

  it('builds, secures and checks the app', async () => {
    // 1. Read the docs and the starting prompt.
    const prompt = await agent.getPrompt({ name: 'start-app', arguments: { idea: 'notes with a summary function' } });
    expect(JSON.stringify(prompt.messages)).toContain('fetch-docs');
    expect(await ok('fetch-docs', { docType: 'instructions' })).toContain('row level security');
    expect(await ok('list-tables')).toContain('no tables yet');

    // 2. Tables by a migration: dry run first, then apply.
    const dry = await ok('dry-run-migration', { sql: NOTES, version: '20260101000000' });
    expect(dry).toContain('version 20260101000000: pending');
    expect(dry).toContain('CreateStmt');
    expect(await ok('apply-migration', { version: '20260101000000', name: 'create_notes', sql: NOTES })).toContain(
      'applied: 2 statement(s)',
    );
    expect(await ok('list-migrations')).toContain('create_notes');

    // 3. RLS policies, tried as two users and anon.
    await ok('run-raw-sql', { query: 'alter table notes enable row level security' });
    await ok('run-raw-sql', {
      query:
        'create policy notes_owner on notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())',
    });
    const idOf = (text: string) => /id ([0-9a-f-]{36})/.exec(text)![1]!;
    const alice = idOf(await ok('create-user', { email: 'alice@example.com', password: 'alice-password' }));
    const bob = idOf(await ok('create-user', { email: 'bob@example.com', password: 'bob-password' }));
    await ok('write-records', {
      table: 'notes',
      method: 'insert',
      body: [{ title: 'alice 1' }, { title: 'alice 2' }],
      as: { role: 'user', userId: alice },
    });
    await ok('write-records', {
      table: 'notes',
      method: 'insert',
      body: { title: 'bob 1' },
      as: { role: 'user', userId: bob },
    });
    const asBob = await ok('select-records', {
      table: 'notes',
      query: 'select=title',
      as: { role: 'user', userId: bob },
    });
    expect(asBob).toContain('bob 1');
    expect(asBob).not.toContain('alice');
    expect(await ok('select-records', { table: 'notes', as: { role: 'anon' } })).toContain('(no rows)');
    const steal = await agent.text('write-records', {
      table: 'notes',
      method: 'update',
      query: 'title=eq.alice 1',
      body: { title: 'mine now' },
      as: { role: 'user', userId: bob },
    });
    expect(steal.text).toContain('updated 0');
    expect(
      await ok('select-records', { table: 'notes', query: 'select=title&order=title', as: { role: 'admin' } }),
    ).toContain('alice 1');

    // 4. A function with a secret: deploy, call, read its logs, schedule it and see a run.
    await ok('set-secret', { name: 'SUMMARY_MODEL', value: 'tiny-1' });
    await ok('create-function', { name: 'Summarize', slug: 'summarize', code: FUNCTION });
    const called = await ok('invoke-function', {
      slug: 'summarize',
      body: JSON.stringify({ title: 'a very long title' }),
    });
    expect(called).toContain('status 200');
    expect(called).toContain('"summary":"a very lon"');
    expect(called).toContain('"model":"tiny-1"');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await ok('get-function-logs', { slug: 'summarize' })).toContain('summarize a very long title');
    const schedule = JSON.parse(
      await ok('create-schedule', {
        name: 'hourly summary',
        cronSchedule: '0 * * * *',
        functionSlug: 'summarize',
        body: { title: 'scheduled note' },
      }),
    ) as { id: string };
    await ok('run-schedule', { id: schedule.id });
    await until(
      async () => /\| succeeded \| manual \|/.test(await ok('list-schedule-runs', { id: schedule.id })),
      20_000,
      'the scheduled run',
    );
    await until(
      async () =>
        (await ok('get-container-logs', { source: 'functions', q: 'scheduled note' })).includes(
          'summarize scheduled note',
        ),
      10_000,
      "the scheduled run's log line",
    );

    // 5. The advisor: fix each finding on notes by a migration, re-scan until none is left.
    let scan = await ok('run-advisor-scan');
    expect(notesFindings(scan).length, scan).toBeGreaterThan(0);
    for (let version = 20260101000001; notesFindings(scan).length && version < 20260101000010; version++) {
      const fix = /\n {2}fix: (.+)/.exec(notesFindings(scan)[0]!)![1]!;
      expect(await ok('dry-run-migration', { sql: fix })).toMatch(/^risk /);
      await ok('apply-migration', { version: String(version), name: 'advisor_fix', sql: fix });
      scan = await ok('run-advisor-scan');
    }
    expect(notesFindings(scan), scan).toEqual([]);
    expect(await ok('list-migrations')).toMatch(/\| 20260101000001 \| advisor_fix \|/);
    expect(notesFindings(await ok('get-advisor-issues'))).toEqual([]);

    // 6. The typed client and a final check.
    expect(await ok('generate-typescript-types')).toMatch(
      /notes: \{\n\s+Row: \{\n\s+id: string\n\s+owner: string\n\s+title: string/,
    );
    const schema = await ok('get-table-schema', { tableName: 'notes' });
    expect(schema).toContain('RLS on');
    expect(schema).toContain('notes_owner');
    expect(await ok('list-functions')).toContain('summarize');
    expect(
      await ok('select-records', {
        table: 'notes',
        query: 'select=title&order=title',
        as: { role: 'user', userId: alice },
      }),
    ).toContain('alice 2');
  }, 120_000);
});
