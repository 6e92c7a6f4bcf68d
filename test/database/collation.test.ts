// Text sorts the way people expect on both databases (ICU root collation): the embedded
// server is initialised with it, test databases on a server are created with it, and a server
// database that sorts by bytes is detected so Plinth can warn at start.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUrl, backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { sortsTextByBytes } from '../../src/db/collation.js';

const NAMES = ['Shopping', 'zebra', 'alice', 'Émile', 'Bob', 'bob'];

describe.each(backends())('text order (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp(backend);
    const admin = { 'x-api-key': t.adminKey };
    const made = await call(t, 'POST', '/api/database/tables', {
      headers: admin,
      body: { tableName: 'people', rlsEnabled: false, columns: [{ name: 'name', type: 'string', nullable: false }] },
    });
    expect(made.status).toBe(201);
    const rows = await call(t, 'POST', '/api/database/records/people', {
      headers: admin,
      body: NAMES.map((name) => ({ name })),
    });
    expect(rows.status).toBe(201);
  });
  afterAll(async () => t?.close());

  it('order=name sorts case and accents as secondary differences, not by bytes', async () => {
    const r = await call(t, 'GET', '/api/database/records/people?select=name&order=name.asc', {
      headers: { 'x-api-key': t.adminKey },
    });
    expect(r.status).toBe(200);
    expect(r.body.map((x: { name: string }) => x.name)).toEqual(['alice', 'bob', 'Bob', 'Émile', 'Shopping', 'zebra']);
    expect(await sortsTextByBytes(t.deps.db)).toBe(false);
  });

  it('tells a database that sorts by bytes (collation C) apart, for the start warning', async () => {
    const admin = adminUrl(backend);
    const name = `plinth_c_${Date.now().toString(36)}`;
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(`create database ${name} template template0 encoding 'UTF8' locale 'C'`);
      const u = new URL(admin);
      u.pathname = `/${name}`;
      const bytes = new pg.Client({ connectionString: u.toString() });
      await bytes.connect();
      try {
        expect(await sortsTextByBytes({ query: (sql: string) => bytes.query(sql) } as never)).toBe(true);
      } finally {
        await bytes.end();
      }
    } finally {
      await c.query(`drop database if exists ${name}`);
      await c.end();
    }
  });
});
