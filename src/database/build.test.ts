import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { parseRecordsQuery } from './query.js';
import { buildDelete, buildInsert, buildSelect, buildUpdate } from './build.js';
import { table } from '../../test/helpers/people-table.js';

describe('records SQL builder', () => {
  it('builds a select with typed parameters, order, limit and a window count', () => {
    const s = buildSelect(
      table,
      parseRecordsQuery(
        'select=name,age&age=gte.18&name=ilike.*an*&or=(ok.is.true,age.in.(1,2))&order=age.desc.nullslast&limit=20&offset=40',
      ),
    );
    const where =
      'where t0."age" >= $1::integer and t0."name" ilike $2 and (t0."ok" is true or t0."age" in ($3::integer, $4::integer))';
    expect(s.text).toBe(
      `with page as (select t0.* from public."people" t0 ${where} order by t0."age" desc nulls last limit $5 offset $6) ` +
        `select coalesce((select json_agg(r.*) from (select t0."name" as "name", t0."age" as "age" from page t0 order by t0."age" desc nulls last) r), '[]')::text as body, ` +
        `(select count(*) from public."people" t0 ${where}) as total`,
    );
    expect(s.values).toEqual(['18', '%an%', '1', '2', 20, 40]);
  });

  it('puts every value in a parameter, never in the SQL text', () => {
    const evil = `x'; drop table people; --`;
    const s = buildSelect(
      table,
      parseRecordsQuery(`name=eq.${encodeURIComponent(evil)}&name=in.(${encodeURIComponent(`"${evil}"`)})`),
    );
    expect(s.text).not.toContain('drop');
    expect(s.values).toContain(evil);
  });

  it('refuses unknown columns and bad values with 400s naming them', () => {
    for (const [raw, code, name] of [
      ['nope=eq.1', 'UNKNOWN_COLUMN', 'nope'],
      ['order=nope', 'UNKNOWN_COLUMN', 'nope'],
      ['select=nope', 'UNKNOWN_COLUMN', 'nope'],
      ['or=(nope.eq.1)', 'UNKNOWN_COLUMN', 'nope'],
      ['age=eq.1.5', 'INVALID_VALUE', 'age'],
      ['age=eq.', 'INVALID_VALUE', 'age'],
      ['id=eq.123', 'INVALID_VALUE', 'id'],
      ['ok=eq.yes', 'INVALID_VALUE', 'ok'],
      ['age=is.true', 'INVALID_VALUE', 'age'],
      ['meta=eq.{', 'INVALID_VALUE', 'meta'],
    ] as const) {
      try {
        buildSelect(table, parseRecordsQuery(raw));
        throw new Error(`no error for ${raw}`);
      } catch (e) {
        expect(e, raw).toBeInstanceOf(AppError);
        expect((e as AppError).code, raw).toBe(code);
        expect((e as AppError).message, raw).toContain(name);
      }
    }
  });

  it('builds multi-row inserts with defaults for missing keys, and upserts', () => {
    const s = buildInsert(table, [{ name: 'a', age: 3 }, { meta: { x: [1] } }], {
      representation: true,
      select: null,
      upsert: null,
    });
    expect(s.text).toBe(
      'with w as (insert into public."people" ("name", "age", "meta") values ($1::text, $2::integer, default), (default, default, $3::jsonb) returning *) select coalesce(json_agg(r.*), \'[]\')::text as body, count(*) as total from (select t0."id" as "id", t0."name" as "name", t0."age" as "age", t0."ok" as "ok", t0."meta" as "meta" from w t0) r',
    );
    expect(s.values).toEqual(['a', '3', '{"x":[1]}']);
    const u = buildInsert(table, [{ id: '00000000-0000-0000-0000-000000000001', name: 'b' }], {
      representation: false,
      select: null,
      upsert: { onConflict: ['id'], resolution: 'merge' },
    });
    // An upsert counts what it inserted (xmax 0), so /api/db answers 200 when it inserted nothing.
    expect(u.text).toContain(
      'insert into public."people" ("id", "name") values ($1::uuid, $2::text) on conflict ("id") do update set "id" = excluded."id", "name" = excluded."name" returning *, (xmax::text = \'0\') as plinth_inserted',
    );
    expect(u.text).toContain('(select count(*) from w where w.plinth_inserted) as inserted');
    const i = buildInsert(table, [{ name: 'b' }], {
      representation: false,
      select: null,
      upsert: { onConflict: ['id'], resolution: 'ignore' },
    });
    expect(i.text).toContain('on conflict ("id") do nothing');
    expect(buildInsert(table, [{}, {}], { representation: false, select: null, upsert: null }).text).toBe(
      'insert into public."people" ("id") values (default), (default)',
    );
  });

  it('refuses type mismatches in bodies, empty strings on non-text columns included', () => {
    for (const row of [
      { age: '' },
      { age: 1.5 },
      { age: 'x' },
      { ok: 'true ' },
      { id: '' },
      { name: { a: 1 } },
      { age: 2 ** 40 },
      { nope: 1 },
    ]) {
      expect(
        () => buildInsert(table, [row], { representation: false, select: null, upsert: null }),
        JSON.stringify(row),
      ).toThrow(AppError);
    }
  });

  it('requires a filter for update and delete', () => {
    expect(() => buildUpdate(table, parseRecordsQuery(''), { name: 'x' }, false)).toThrow(/filter/);
    expect(() => buildDelete(table, parseRecordsQuery('select=id'), false)).toThrow(/filter/);
    expect(() =>
      buildDelete(table, parseRecordsQuery('id=eq.00000000-0000-0000-0000-000000000001&limit=1'), false),
    ).toThrow(/limit/);
    const u = buildUpdate(table, parseRecordsQuery('age=lt.3'), { name: 'x', ok: true }, false);
    expect(u.text).toBe(
      'update public."people" t0 set "name" = $1::text, "ok" = $2::boolean where t0."age" < $3::integer',
    );
    expect(u.values).toEqual(['x', 'true', '3']);
    const d = buildDelete(table, parseRecordsQuery('not.or=(age.lt.3,name.is.null)&select=id'), true);
    expect(d.text).toBe(
      'with w as (delete from public."people" t0 where not (t0."age" < $1::integer or t0."name" is null) returning *) select coalesce(json_agg(r.*), \'[]\')::text as body, count(*) as total from (select t0."id" as "id" from w t0) r',
    );
  });
});
