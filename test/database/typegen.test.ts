// Typed clients: the generated `Database` type (Supabase's format) type-checks a postgrest-js
// program with tsc, and catches a wrong table, a wrong column type and a wrong insert.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

const SCHEMA = [
  `create type mood as enum ('happy', 'sad')`,
  `create table authors (id uuid primary key default gen_random_uuid(), name text not null, mood mood)`,
  `create table posts (id bigint generated always as identity primary key, author_id uuid not null references authors(id), title text not null, tags text[], meta jsonb, published boolean default false)`,
  `create view post_titles as select id, title from posts`,
  `create function add_one(n integer) returns integer language sql as 'select n + 1'`,
];

const PROGRAM = `
import { PostgrestClient } from '@supabase/postgrest-js';
import type { Database, Tables } from './database.types.js';

const db = new PostgrestClient<Database>('http://localhost:7130/api/database/records');

export async function run(): Promise<void> {
  const { data } = await db.from('posts').select('id, title, tags, author:authors(name, mood)');
  const title: string = data![0]!.title;
  const tags: string[] | null = data![0]!.tags;
  const mood: 'happy' | 'sad' | null | undefined = data![0]!.author?.mood;
  await db.from('posts').insert({ author_id: 'x', title: 'hello' });
  const v = await db.from('post_titles').select('title');
  const n = await db.rpc('add_one', { n: 1 });
  const row: Tables<'authors'> = { id: 'x', name: 'n', mood: 'happy' };
  // @ts-expect-error no such table
  await db.from('nope').select('*');
  // @ts-expect-error title is a string
  const wrong: number = data![0]!.title;
  // @ts-expect-error title is required on insert
  await db.from('posts').insert({ author_id: 'x' });
  // @ts-expect-error published is a boolean
  await db.from('posts').insert({ author_id: 'x', title: 't', published: 'yes' });
  void [title, tags, mood, v, n, row, wrong];
}
`;

describe.each(backends())('GET /api/database/types/typescript (%s)', (backend) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await startApp(backend);
    for (const query of SCHEMA) {
      const r = await call(t, 'POST', '/api/database/sql', { headers: { 'x-api-key': t.adminKey }, body: { query } });
      expect(r.status, r.text).toBe(200);
    }
    dir = mkdtempSync(path.join(ROOT, '.typegen-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is admin only', async () => {
    expect((await call(t, 'GET', '/api/database/types/typescript', { headers: { apikey: t.anonKey } })).status).toBe(
      403,
    );
  });

  it('answers tables, views, functions, enums and relationships', async () => {
    const r = await call(t, 'GET', '/api/database/types/typescript', { headers: { 'x-api-key': t.adminKey } });
    expect(r.status).toBe(200);
    const { types } = r.body as { types: string };
    expect(types).toContain('export type Database = {');
    expect(types).toContain('foreignKeyName: "posts_author_id_fkey"');
    expect(types).toContain('mood: "happy" | "sad"');
    expect(types).toMatch(/post_titles: \{\n\s+Row:/);
    expect(types).toMatch(/add_one: \{\n\s+Args: \{\n\s+n: number\n\s+\}\n\s+Returns: number/);
    writeFileSync(path.join(dir, 'database.types.ts'), types);
  });

  it('type-checks a postgrest-js program with tsc, and catches wrong tables, columns and inserts', () => {
    const file = path.join(dir, 'program.ts');
    writeFileSync(file, PROGRAM);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      noUnusedLocals: false,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  }, 60_000);
});
