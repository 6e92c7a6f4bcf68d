import { describe, expect, it } from 'vitest';
import { assess, splitStatements, touchedTables, type TableSizes } from './risk.js';
import { callsAuthPerRow } from '../../advisor/performance.js';

const level = async (sql: string, sizes: TableSizes = new Map()) => {
  const [s] = await splitStatements(sql);
  return assess(s!, sizes).riskLevel;
};

describe('migration risk, read with the Postgres parser', () => {
  it('splits a script at real statement ends, not at semicolons in strings, comments or bodies', async () => {
    const s = await splitStatements(
      `create function f() returns int language sql as $$ select 1; $$;\n-- a; comment\ninsert into t values ('a;b');`,
    );
    expect(s.map((x) => x.kind)).toEqual(['CreateFunctionStmt', 'InsertStmt']);
    expect(s[1]!.sql).toBe(`insert into t values ('a;b')`);
  });

  it('grades statements', async () => {
    expect(await level('drop table a, b')).toBe('DANGER');
    expect(await level('drop index i')).toBe('WARNING');
    expect(await level('drop index i cascade')).toBe('DANGER');
    expect(await level('delete from t where id in (select id from u)')).toBe('SAFE');
    expect(await level('delete from t')).toBe('DANGER');
    expect(await level('alter table t add column c uuid default gen_random_uuid()')).toBe('WARNING');
    expect(await level('alter table t add column c int default 0')).toBe('SAFE');
    expect(await level('alter table t add constraint f foreign key (x) references u (id) not valid')).toBe('SAFE');
    expect(await level('alter table t add constraint f foreign key (x) references u (id)')).toBe('WARNING');
    const big: TableSizes = new Map([['t', { rows: 200_000, bytes: 0 }]]);
    expect(await level('alter table t alter column a type bigint', big)).toBe('DANGER');
    expect(await level('alter table public.t alter column a type bigint')).toBe('WARNING');
    expect(
      touchedTables(await splitStatements('alter table public.t add column x int; create index on u (a)')),
    ).toEqual(['public.t', 'u']);
  });

  it('answers a syntax error with its line and column', async () => {
    await expect(splitStatements('select 1;\n  selec 2')).rejects.toMatchObject({
      code: 'SQL_ERROR',
      position: { line: 2, column: 3 },
    });
  });

  it('tells auth.uid() per row from (select auth.uid())', async () => {
    expect(await callsAuthPerRow('owner = auth.uid()')).toBe(true);
    expect(await callsAuthPerRow('owner = ( SELECT auth.uid() AS uid)')).toBe(false);
    expect(await callsAuthPerRow("(auth.jwt() ->> 'role') = 'admin'")).toBe(true);
    expect(await callsAuthPerRow('owner = myschema.uid()')).toBe(false);
  });
});
