// Baseline for the embedding benchmark: a bare node:http server that runs the same read as a
// join written by hand (posts with their author's name, 20 rows) through bare `pg`, in the
// same role/claims transaction Plinth uses, with the total of rows Plinth's answer carries
// (X-Total-Count, which the spec demands). No framework, no parsing, no auth.
import http from 'node:http';
import pg from 'pg';

const port = Number(process.env.PORT);
const claims = process.env.BENCH_CLAIMS!;
const SETUP = `select set_config('role', 'authenticated', true), set_config('request.jwt.claims', $1, true)`;
const JOIN =
  `select coalesce(json_agg(r.*), '[]')::text as body from (` +
  `select p.*, case when a.id is null then null else json_build_object('name', a.name) end as author ` +
  `from public.posts p left join public.profiles a on a.id = p.author_id order by p.id limit $1) r`;
const TOTAL = `select count(*) as total from public.posts`;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => {}); // the benchmark's database is dropped with its connections at the end

http
  .createServer(async (_req, res) => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      await c.query(SETUP, [claims]);
      const r = await c.query(JOIN, [20]);
      const total = await c.query(TOTAL);
      await c.query('commit');
      const body = String(r.rows[0].body);
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'x-total-count': String(total.rows[0].total),
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    } catch (e) {
      await c.query('rollback').catch(() => {});
      res.writeHead(500);
      res.end(String(e));
    } finally {
      c.release();
    }
  })
  .listen(port, '127.0.0.1');
