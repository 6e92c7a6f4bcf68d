// Embedding benchmark (server Postgres): GET /api/database/records/posts?select=*,author:profiles(name)
// &order=id&limit=20 as a user through Plinth (one statement with a lateral JSON embed, RLS
// on both tables), against the same join written by hand in SQL through bare `pg`
// (bench/baseline-embed.ts), same database, interleaved rounds. Goal: ≥ 0.7×.
// Run: npx tsx bench/embed.ts  (BENCH_DATABASE_URL or TEST_DATABASE_URL, else local Postgres)
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLINTH, freshBenchDatabase, compare, freePort, requireWrk, spawnServer, type Server } from './lib.js';
import { newAdminKey } from '../src/auth/credentials.js';

const POSTS = 10_000;
const AUTHORS = 100;
const JWT_SECRET = randomBytes(32).toString('hex');
const ADMIN_KEY = newAdminKey();

async function sqlCall(url: string, query: string, params: unknown[] = []): Promise<{ rows: any[] }> {
  const r = await fetch(`${url}/api/database/sql`, {
    method: 'POST',
    headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ query, params }),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`SQL ${r.status}: ${text}`);
  return JSON.parse(text);
}

/** Two tables under RLS (policies that let users read), the rows, a user and its token. */
async function load(url: string) {
  for (const s of [
    `create table public.profiles (id uuid primary key default gen_random_uuid(), name text not null)`,
    `create table public.posts (id serial primary key, title text not null, author_id uuid references public.profiles(id), score int not null)`,
    `create index posts_author on public.posts (author_id)`,
    `grant select on public.profiles, public.posts to authenticated`,
    `alter table public.profiles enable row level security`,
    `alter table public.posts enable row level security`,
    `create policy read_all on public.profiles for select to authenticated using (true)`,
    `create policy read_all on public.posts for select to authenticated using (true)`,
  ])
    await sqlCall(url, s);
  await sqlCall(url, `insert into public.profiles (name) select 'author ' || i from generate_series(1, $1::int) i`, [
    AUTHORS,
  ]);
  await sqlCall(
    url,
    `insert into public.posts (title, author_id, score) select 'post ' || i, (select id from public.profiles order by name offset (i % $2::int) limit 1), i from generate_series(1, $1::int) i`,
    [POSTS, AUTHORS],
  );
  await sqlCall(url, 'analyze public.profiles; analyze public.posts');
  // The reader signs up (admin SQL may not write auth.users since least privilege, issue #40).
  const signup = await fetch(`${url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `embed-${randomBytes(4).toString('hex')}@example.com`,
      password: 'bench-password-1',
    }),
  });
  if (!signup.ok) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
  const { accessToken: token } = (await signup.json()) as { accessToken: string };
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  // The claims Plinth sets for this caller (src/database/caller.ts), for the baseline to set too.
  return { token, claims: JSON.stringify({ ...payload, role: 'authenticated' }) };
}

export async function benchEmbed(): Promise<void> {
  await requireWrk();
  const database = await freshBenchDatabase();
  const dbUrl = database.url;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-bench-embed-'));
  const servers: Server[] = [];
  try {
    const port = await freePort();
    const env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PLAN: 'off',
      ADMIN_API_KEY: ADMIN_KEY,
      JWT_SECRET,
      TOKEN_TTL: '3600',
      DATABASE_URL: dbUrl,
      DATA_DIR: dataDir,
    };
    const plinth = await spawnServer(PLINTH.cmd, PLINTH.args, { env, port, readyPath: '/api/health' });
    servers.push(plinth);
    const fx = await load(plinth.url);
    const basePort = await freePort();
    const base = await spawnServer(process.execPath, ['--import', 'tsx', 'bench/baseline-embed.ts'], {
      env: { PORT: String(basePort), DATABASE_URL: dbUrl, BENCH_CLAIMS: fx.claims },
      port: basePort,
    });
    servers.push(base);
    const auth = { authorization: `Bearer ${fx.token}` };
    const check = await fetch(
      `${plinth.url}/api/database/records/posts?select=*,author:profiles(name)&order=id&limit=20`,
      { headers: auth },
    );
    const rows = (await check.json()) as Array<{ author: { name: string } | null }>;
    if (rows.length !== 20 || !rows[0]?.author?.name)
      throw new Error(`unexpected Plinth answer: ${JSON.stringify(rows).slice(0, 200)}`);
    await compare(
      `Embedded read on server Postgres, ${POSTS} posts, ${AUTHORS} authors, as a user through RLS (goal ≥ 0.7×)`,
      [
        {
          name: 'GET posts?select=*,author:profiles(name)&order=id&limit=20 vs hand-written join',
          baseline: { url: `${base.url}/`, headers: auth, pid: base.pid, seconds: 4 },
          subject: {
            url: `${plinth.url}/api/database/records/posts?select=*,author:profiles(name)&order=id&limit=20`,
            headers: auth,
            pid: plinth.pid,
            seconds: 4,
          },
        },
      ],
      3,
    );
  } finally {
    for (const s of servers) await s.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchEmbed();
