// Baseline for the database benchmark: a bare node:http server running the same SQL as Plinth
// (same statements, same role/claims setup, same transaction) on the same database, with pg or
// PGlite directly. No framework, no validation, no auth: the floor Plinth is measured against.
import http from 'node:http';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

const port = Number(process.env.PORT);
const sql = JSON.parse(process.env.BENCH_SQL!) as {
  a: string;
  a2?: string;
  b: string;
  c: string;
  d?: string;
  e?: string;
};
const claims = process.env.BENCH_CLAIMS!;

type Run = (text: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>;
const SETUP = `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`;

async function open(): Promise<Run> {
  if (process.env.BENCH_PGLITE_DIR) {
    const db = await PGlite.create(process.env.BENCH_PGLITE_DIR);
    return (text, values) =>
      db.transaction(async (tx) => {
        await tx.query(SETUP, ['authenticated', claims]);
        return (await tx.query<Record<string, unknown>>(text, values)).rows;
      });
  }
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  // The benchmark drops its database when done, ending these connections: not an error.
  pool.on('error', () => {});
  return async (text, values) => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      await c.query(SETUP, ['authenticated', claims]);
      const r = await c.query(text, values);
      await c.query('commit');
      return r.rows;
    } catch (e) {
      await c.query('rollback').catch(() => {});
      throw e;
    } finally {
      c.release();
    }
  };
}

const run = await open();
http
  .createServer(async (req, res) => {
    try {
      const url = new URL(req.url!, 'http://x');
      if (req.method === 'GET' && ['/a', '/a2', '/b', '/d', '/e'].includes(url.pathname)) {
        const owner = url.searchParams.get('owner');
        const rows =
          url.pathname === '/a' || url.pathname === '/a2'
            ? await run(url.pathname === '/a' ? sql.a : sql.a2!, [owner, 20, 0])
            : url.pathname === '/b'
              ? await run(sql.b, [url.searchParams.get('id'), 100, 0])
              : url.pathname === '/d'
                ? await run(sql.d!, [owner, 100, 0])
                : await run(sql.e!, [owner, '100', 20, 0]);
        const body = String(rows[0]!.body);
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'x-total-count': String(rows[0]!.total),
          'content-length': Buffer.byteLength(body),
        });
        return res.end(body);
      }
      if (req.method === 'POST' && url.pathname === '/c') {
        let text = '';
        for await (const chunk of req) text += chunk;
        const row = JSON.parse(text) as { name: string; n: number };
        await run(sql.c, [row.name, String(row.n)]);
        res.writeHead(201);
        return res.end();
      }
      res.writeHead(404);
      res.end();
    } catch (e) {
      res.writeHead(500);
      res.end(String(e));
    }
  })
  .listen(port, '127.0.0.1');
