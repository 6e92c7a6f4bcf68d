// The advisor's answers an agent acts on (issue #40 item 4): a clean schema reports nothing
// (a table other tables reference is no "duplicate index" of itself), and every fix the
// advisor proposes applies as the migration an agent writes from it, after which the findings
// are gone. Findings are dismissed and restored through MCP as through HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { admin, sql } from '../database/helpers.js';
import { mcpClient, type McpClient } from '../mcp/helpers.js';

type Issue = { key: string; rule: string; fixSql: string | null; why: string; suppressed: boolean };

/** A schema as a careful developer writes it: references, indexes, RLS with policies, a pinned definer function. */
const CLEAN = [
  'create table public.projects (id uuid primary key default gen_random_uuid(), owner_id uuid not null, name text not null)',
  'create index projects_owner_id_idx on public.projects (owner_id)',
  'create table public.tasks (id bigint generated always as identity primary key, project_id uuid not null references public.projects (id) on delete cascade, title text, unique (project_id, title))',
  'create table public.comments (id int primary key, task_id bigint references public.tasks (id), project_id uuid references public.projects (id))',
  'create index on public.comments (task_id)',
  'create index on public.comments (project_id)',
  'alter table public.projects enable row level security',
  'alter table public.tasks enable row level security',
  'alter table public.comments enable row level security',
  'create policy own on public.projects for all to authenticated using (owner_id = (select auth.uid())) with check (owner_id = (select auth.uid()))',
  'create policy via_project on public.tasks for select to authenticated using (exists (select 1 from public.projects p where p.id = project_id))',
  'create policy none on public.comments as restrictive for all to anon, authenticated using (false)',
  'grant select, insert, update, delete on public.projects, public.tasks, public.comments to authenticated',
  `create function public.count_projects() returns bigint language sql security definer set search_path = pg_catalog, public as 'select count(*) from public.projects'`,
];

/** Every kind of schema finding, at once. */
const PROBLEMS = [
  'create table public.people (id uuid primary key default gen_random_uuid(), user_id uuid, email text, phone text)',
  'grant select, insert on public.people to anon, authenticated',
  'create table public.orgs (id int primary key, code text)',
  // In CREATE TABLE Postgres drops a unique constraint alike the primary key; added later it stays.
  'alter table public.orgs add constraint orgs_id_key unique (id)',
  'create table public.teams (id int primary key)',
  'create table public.members (id int primary key, team_id int references public.teams (id), owner uuid, level int)',
  'create index members_owner_a on public.members (owner)',
  'create index members_owner_b on public.members (owner)',
  'alter table public.members enable row level security',
  'create policy mine on public.members for select to authenticated using (owner = auth.uid())',
  'create policy senior on public.members for update to authenticated using (level > 2)',
  `create function public.sd() returns int language sql security definer as 'select 1'`,
];

describe.each(backends())('the advisor tells the truth and its fixes apply (%s)', (backend) => {
  let t: TestApp;
  let mcp: McpClient;
  let version = 20260101000000;
  const scan = async (): Promise<Issue[]> => {
    const r = await call(t, 'POST', '/api/advisor/scan', { headers: admin(t) });
    expect(r.status, r.text).toBe(200);
    return r.body.issues;
  };
  /** The fixes of every open finding, as one migration (what an agent writes from a scan). */
  const applyFixes = async (issues: Issue[]) => {
    const fixes = issues.filter((i) => i.fixSql !== null && !i.suppressed).map((i) => i.fixSql!);
    const r = await call(t, 'POST', '/api/database/migrations', {
      headers: admin(t),
      body: { version: String(++version), name: 'advisor-fixes', sql: fixes.join('\n') },
    });
    expect(r.status, `${r.text}\n${fixes.join('\n')}`).toBe(201);
  };
  /** Applies the fixes of each scan as a migration until a scan is clean (at most 4 rounds); the findings left. */
  const fixUntilClean = async (found: Issue[]) => {
    let issues = found;
    for (let round = 0; round < 4 && issues.length; round++) {
      await applyFixes(issues);
      issues = await scan();
    }
    return issues.map((i) => `${i.key}: ${i.fixSql}`);
  };
  beforeAll(async () => {
    t = await startApp(backend);
    mcp = await mcpClient(t);
  });
  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('a clean schema with referenced tables reports nothing (no duplicate_index of a primary key)', async () => {
    for (const s of CLEAN) await sql(t, s);
    const created = await call(t, 'POST', '/api/storage/buckets', {
      headers: admin(t),
      body: { bucketName: 'files', isPublic: false },
    });
    expect(created.status, created.text).toBe(201);
    expect((await scan()).map((i) => `${i.key}: ${i.fixSql}`)).toEqual([]);
  });

  it('every schema finding is fixed by its own SQL, applied as one migration, and is gone after', async () => {
    for (const s of PROBLEMS) await sql(t, s);
    const pub = await call(t, 'POST', '/api/storage/buckets', {
      headers: admin(t),
      body: { bucketName: 'pub', isPublic: true },
    });
    expect(pub.status, pub.text).toBe(201);
    const first = await scan();
    const rules = new Set(first.map((i) => i.rule));
    for (const rule of [
      'rls_disabled_reachable',
      'security_definer_search_path',
      'public_bucket',
      'foreign_key_without_index',
      'policy_column_without_index',
      'policy_auth_call_per_row',
      'duplicate_index',
    ])
      expect(rules, rule).toContain(rule);
    // Two indexes alike: the newer is dropped; a unique constraint alike the primary key goes as a constraint.
    expect(first.find((i) => i.key === 'duplicate_index:public.members_owner_b')?.fixSql).toBe(
      'drop index public."members_owner_b";',
    );
    expect(first.find((i) => i.key === 'duplicate_index:public.orgs_id_key')?.fixSql).toBe(
      'alter table public."orgs" drop constraint "orgs_id_key";',
    );
    expect(first.map((i) => i.key)).not.toContain('duplicate_index:public.orgs_pkey');
    expect(first.map((i) => i.key)).not.toContain('duplicate_index:public.teams_pkey');
    // A fix may uncover the next finding (RLS on: no policy; the owner policy: its column unindexed).
    expect(await fixUntilClean(first)).toEqual([]);
    await sql(t, 'create policy open_read on public.people for select to anon using (true)');
    const open = await scan();
    expect(open.map((i) => i.key)).toEqual(['policy_true_on_personal_data:public.people.open_read']);
    expect(await fixUntilClean(open)).toEqual([]);
  });

  it('MCP dismisses a finding and restores it; errors name tools, not routes', async () => {
    await sql(t, 'create table public.loose (id int primary key)');
    await sql(t, 'grant select on public.loose to anon');
    const key = 'rls_disabled_reachable:public.loose';
    expect((await mcp.text('run-advisor-scan')).text).toContain(key);
    const d = await mcp.text('dismiss-advisor-issue', { key, reason: 'a public lookup table' });
    expect(d.isError, d.text).toBe(false);
    expect((await scan()).find((i) => i.key === key)?.suppressed).toBe(true);
    expect((await mcp.text('get-advisor-issues')).text).not.toContain(key);
    expect((await mcp.text('get-advisor-issues', { includeSuppressed: true })).text).toContain(key);
    const bad = await mcp.text('dismiss-advisor-issue', { key: 'nonsense', reason: 'x' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('the tool get-advisor-issues');
    expect(bad.text).not.toContain('GET /api/advisor/issues');
    expect((await mcp.text('restore-advisor-issue', { key })).isError).toBe(false);
    expect((await mcp.text('get-advisor-issues')).text).toContain(key);
    const gone = await mcp.text('restore-advisor-issue', { key });
    expect(gone.isError).toBe(true);
    expect(gone.text).toContain('the tool get-advisor-issues');
    const readOnly = await mcpClient(t, { readOnly: true });
    const names = (await readOnly.listTools()).tools.map((x) => x.name);
    expect(names).not.toContain('dismiss-advisor-issue');
    await readOnly.close();
  });
});
