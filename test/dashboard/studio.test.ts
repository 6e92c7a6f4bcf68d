// The studio (issue 30) in Chromium: each finding of the issue fixed, and the security, SQL,
// overview, settings, agents, users and storage features, against a real Plinth (the grid has
// its own file, grid.test.ts). axe-core on every page, light and dark; any CSP violation fails
// the run.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { axeBothThemes, axeViolations, browserAvailable, launch, overflow, screenshots, SHOTS } from './browser.js';

const T = { timeout: 60_000 };

describe.runIf(browserAvailable())('dashboard studio in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let userId: string;
  const problems: string[] = [];

  const accessible = async (name?: string) => {
    expect(await axeBothThemes(page)).toEqual([]);
    if (name) await screenshots(page, name);
  };
  /** What an action said, in the toasts. */
  const toast = (text: string | RegExp) => page.getByRole('region', { name: 'Notifications' }).getByText(text);
  const go = async (p: string, heading: string | RegExp) => {
    await page.goto(`${t.url}/dashboard${p}`);
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  };
  const sql = async (query: string, params: unknown[] = []) => {
    const r = await t.fetch('/api/database/sql', {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query, params }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    return (await r.json()).rows;
  };
  const schema = async (table: string) =>
    (await t.fetch(`/api/database/tables/${table}/schema`, { headers: { 'x-api-key': t.adminKey } })).json();

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp(backends().at(-1)!), launch()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    await context.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(
          `CSP violation: ${e.violatedDirective} blocked "${e.sample}" from ${e.sourceFile}:${e.lineNumber}`,
        ),
      ),
    );
    page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      const text = m.text();
      if (/CSP violation: style-src-attr blocked "" from :0/.test(text)) return;
      if (/CSP violation|Refused to/.test(text)) problems.push(`console on ${page.url()}: ${text}`);
    });
    userId = (await createTestUser(t, 'grace@example.com')).userId;
    await sql(`create table public.authors (id uuid primary key default gen_random_uuid(), name text not null)`);
    await sql(`insert into public.authors (name) values ('Ada Lovelace'), ('Grace Hopper')`);
    await sql(`create table public.todos (id uuid primary key default gen_random_uuid(), created_at timestamptz not null default now(), author uuid references public.authors (id),
      title text, done boolean not null default false, due date, meta jsonb, note_one text, note_two text, note_three text)`);
    await sql(`create type public.mood as enum ('happy', 'sad')`);
    await sql(`alter table public.todos add column mood public.mood`);
    const [ada] = await sql(`select id from public.authors where name = 'Ada Lovelace'`);
    const long = 'a rather long piece of text that makes the column wide';
    await sql(
      `insert into public.todos (author, title, note_one, note_two, note_three) values ($1, 'first', $2, $2, $2)`,
      [ada.id, long],
    );
    await sql(
      `insert into public.todos (title, done, due) values ('second', false, '2026-01-01'), ('third', true, null)`,
    );
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in; a wrong key hints at rotating the admin key, not at a command that cannot help', T, async () => {
    await page.goto(`${t.url}/dashboard/`);
    await page.getByLabel('Admin API key').fill('ik_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('keys rotate-admin');
    expect(await page.getByRole('alert').textContent()).not.toContain('keys show');
    await page.getByLabel('Admin API key').fill(t.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('opens on an overview with sizes and counts', T, async () => {
    await expect.poll(() => page.locator('.cards').textContent()).toMatch(/Database size/);
    expect(await page.locator('.cards').textContent()).toMatch(/Tables/);
    // The request charts read GET /api/logs/stats: the requests of the sign-in are there once stored.
    await expect
      .poll(
        async () => (
          await go('/overview', 'Overview'), page.getByRole('img', { name: /^Requests per minute/ }).count()
        ),
        { timeout: 20_000 },
      )
      .toBe(1);
    expect(await page.getByRole('img', { name: /^Latency per minute/ }).count()).toBe(1);
    // Usage over time: one sample at start says "collecting"; with an earlier one the charts show.
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /Collecting usage over time: the first sample is at/ })
        .count(),
    ).toBe(1);
    await t.deps.db.query(`insert into system.usage_samples (at, database_bytes, storage_bytes, function_calls, function_errors, ai_tokens)
      select min(at) - interval '5 minutes', 1000, 0, 2, 1, 40 from system.usage_samples`);
    await go('/overview', 'Overview');
    for (const name of [
      /^Database size: database up to \d/,
      /^Storage size: stored objects up to/,
      /^Function calls per 5 min: calls up to 2, errors up to 1/,
      /^AI tokens per 5 min: tokens up to 40/,
    ]) {
      await expect.poll(() => page.getByRole('img', { name }).count()).toBe(1);
    }
    await accessible('overview');
  });

  it('lists tables with row estimate, size, RLS and realtime', T, async () => {
    await go('/tables', 'Tables');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'todos', exact: true }) });
    await expect.poll(() => row.textContent()).toMatch(/off/);
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(
      expect.arrayContaining(['Rows (estimate)', 'Size', 'RLS', 'Realtime']),
    );
    expect(await row.getByRole('cell').nth(2).textContent()).toMatch(/KiB|B$/);
    // Never analyzed: the estimate is the live-row counter (3 rows), not the planner's -1 shown as 0.
    await expect
      .poll(async () => {
        await go('/tables', 'Tables');
        return row.getByRole('cell').nth(1).textContent();
      })
      .toBe('3');
    await accessible('tables-list');
  });

  it('turns row-level security on by default in "New table"', T, async () => {
    await page.getByRole('button', { name: 'New table' }).click();
    expect(await page.getByRole('checkbox', { name: /Row-level security on/ }).isChecked()).toBe(true);
    await page.getByLabel('Table name').fill('secrets');
    await page.getByLabel('Name', { exact: true }).fill('body');
    await page.getByRole('button', { name: 'Create table' }).click();
    await page.getByRole('heading', { name: 'secrets', exact: true }).waitFor();
    expect((await schema('secrets')).rlsEnabled).toBe(true);
  });

  it('shows the SQL of a schema change before running it', T, async () => {
    await go('/tables/todos/schema', 'todos');
    await page.getByLabel('Name', { exact: true }).fill('priority');
    await page.getByLabel('Type', { exact: true }).selectOption('integer');
    await page.getByRole('button', { name: 'Add column' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe(
      'alter table public."todos" add column "priority" bigint;',
    );
    await accessible('schema-sql');
    await page.getByRole('button', { name: 'Run SQL' }).click();
    await toast('Applied: add column priority.').waitFor();
    await page.getByRole('cell', { name: 'priority', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Drop foreign key of author' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe(
      'alter table public."todos" drop constraint "todos_author_fkey";',
    );
    await page.getByRole('button', { name: 'Cancel' }).click();
    // Rename and change type ask in a dialog of the design system (not the browser's prompt()).
    await page.getByRole('button', { name: 'Rename column priority' }).click();
    await page.getByRole('dialog', { name: 'Rename column priority' }).getByLabel('New name').fill('prio');
    await page.getByRole('button', { name: 'Show the SQL' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe(
      'alter table public."todos" rename column "priority" to "prio";',
    );
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Change type of priority' }).click();
    await page
      .getByRole('dialog', { name: 'Change type of priority' })
      .getByLabel(/New type/)
      .fill('text');
    await page.getByRole('button', { name: 'Show the SQL' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toContain('alter column "priority" type text');
    await page.getByRole('button', { name: 'Cancel' }).click();
    // The actions column is a table cell like the others (aligned), on every grid page.
    expect(
      await page
        .locator('table.grid tbody td:last-child')
        .first()
        .evaluate((e) => getComputedStyle(e).display),
    ).toBe('table-cell');
  });

  it('toggles RLS and realtime, adds a policy from a template, and tests as anon and as a user', T, async () => {
    await page.getByRole('link', { name: 'Policies', exact: true }).click();
    await page.getByRole('switch', { name: 'Row-level security' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe(
      'alter table public."todos" enable row level security;',
    );
    await page.getByRole('button', { name: 'Run SQL' }).click();
    await expect.poll(async () => (await schema('todos')).rlsEnabled).toBe(true);
    await page.getByRole('switch', { name: /^Realtime/ }).click();
    await expect.poll(async () => (await schema('todos')).realtime).toBe(true);
    await page.getByLabel('Template').selectOption('public_read');
    await page.getByRole('button', { name: 'Review SQL' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toContain('for select to anon, authenticated');
    await page.getByRole('button', { name: 'Run SQL' }).click();
    await page.getByRole('cell', { name: 'todos_public_read', exact: true }).waitFor();
    await sql('grant select on public.todos to anon, authenticated');
    await page.getByRole('button', { name: 'Run as anon' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'As anon' }).textContent())
      .toContain('3 rows visible');
    await page.getByLabel('Run as').selectOption({ label: 'grace@example.com' });
    await page.getByRole('button', { name: 'Run as user' }).click();
    await page.getByRole('status').filter({ hasText: 'As authenticated' }).waitFor();
    await accessible('security');
  });

  it('offers a ready-to-copy API snippet per table', T, async () => {
    await page.getByRole('link', { name: 'API', exact: true }).click();
    expect(await page.getByLabel('@insforge/sdk', { exact: true }).textContent()).toContain(`from('todos')`);
    expect(await page.getByLabel('curl', { exact: true }).textContent()).toContain(
      `${t.url}/api/database/records/todos`,
    );
    expect(await page.getByLabel('postgrest-js', { exact: true }).textContent()).toContain('PostgrestClient');
    await accessible('api');
  });

  it(
    'completes table names in SQL, never on Enter, without breaking the CSP; shows an error position once',
    T,
    async () => {
      await go('/sql', 'SQL editor');
      await page.getByRole('complementary', { name: 'Schema' }).getByText('todos', { exact: true }).waitFor();
      await page.locator('.cm-content').click();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.press('Delete');
      await page.keyboard.type('select * from to', { delay: 20 });
      await page.locator('.cm-tooltip-autocomplete').getByText('todos', { exact: true }).waitFor();
      // As a person would: the popup has been open a while (past its 75 ms interaction delay).
      await page.waitForTimeout(300);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('.cm-content').innerText()).toMatch(/^select \* from to\n/);
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.insertText('select 1 +\n  from todos');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('line 2, column 3');
      expect((await page.getByRole('alert').textContent())!.split('line 2, column 3').length).toBe(2);
      expect(problems).toEqual([]);
    },
  );

  it('has a schema browser, history, saved queries, result export and an explain view', T, async () => {
    await page.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.insertText('select title from todos order by title');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('region', { name: 'Results' }).getByText('third').waitFor();
    const [dl] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(readFileSync((await dl.path())!, 'utf8')).toContain('third');
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect.poll(() => page.getByLabel('Query plan').textContent()).toMatch(/Scan|Sort/);
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('list', { name: 'History' }).getByText('select title from todos order by title').waitFor();
    await page.getByRole('button', { name: 'Save query' }).click();
    await page.getByRole('dialog', { name: 'Save query' }).getByLabel('Name').fill('titles');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved (1)' }).click();
    await page
      .getByRole('list', { name: 'Saved queries' })
      .getByRole('button', { name: 'titles', exact: true })
      .waitFor();
    await page.getByText('todos', { exact: true }).first().click();
    await page.getByRole('button', { name: 'Insert column todos.title' }).waitFor();
    await accessible('sql-studio');
  });

  it(
    'edits a user, marks them verified, lists their sessions, signs them out everywhere, bans and unbans them',
    T,
    async () => {
      // Plinth's own tables are out of admin SQL's reach (the owner role): set up as the superuser.
      await t.deps.db.query(`update auth.users set email_verified = false where id = $1`, [userId]);
      await go('/users', 'Users');
      await page.getByRole('button', { name: 'Open grace@example.com' }).click();
      const panel = page.getByRole('dialog', { name: 'User' });
      await panel.getByRole('region', { name: 'Sessions' }).getByRole('row').nth(1).waitFor();
      await panel.getByLabel('Name').fill('Grace');
      await panel.getByRole('button', { name: 'Save' }).click();
      await toast('Name saved.').waitFor();
      await panel.getByRole('button', { name: 'Mark verified' }).click();
      await toast('Marked verified.').waitFor();
      await panel.getByText('✓ verified').waitFor();
      await panel.getByRole('button', { name: 'Send password reset' }).click();
      await toast('Password reset email sent.').waitFor();
      await accessible('user-panel');
      await panel.getByRole('button', { name: 'Sign out everywhere' }).click();
      await panel.getByText('No live sessions.').waitFor();
      const [u] = (
        await t.deps.db.query<{ email_verified: boolean; name: string }>(
          `select email_verified, profile->>'name' as name from auth.users where id = $1`,
          [userId],
        )
      ).rows;
      expect(u).toEqual({ email_verified: true, name: 'Grace' });
      // Ban (indefinitely, with a reason): the panel and the list say so; then unban.
      const ban = async () =>
        (
          await t.deps.db.query(
            `select banned_until::text as until, ban_reason as reason from auth.users where id = $1`,
            [userId],
          )
        ).rows[0];
      await panel.getByLabel('Reason').fill('Spam');
      await panel.getByRole('button', { name: 'Ban', exact: true }).click();
      await panel.getByRole('button', { name: 'Unban' }).waitFor();
      expect(await ban()).toEqual({ until: 'infinity', reason: 'Spam' });
      await accessible('user-panel-banned');
      await panel.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('region', { name: 'Users' }).getByText('Banned', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Open grace@example.com' }).click();
      await panel.getByRole('button', { name: 'Unban' }).click();
      await panel.getByRole('button', { name: 'Ban', exact: true }).waitFor();
      expect(await ban()).toEqual({ until: null, reason: null });
    },
  );

  it('previews images and text, uploads several dropped files with progress, counts folders honestly', T, async () => {
    await t.fetch('/api/storage/buckets', {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ bucketName: 'media', isPublic: false }),
    });
    await go('/storage/media', 'media');
    const drop = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      const png = Uint8Array.from(
        atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='),
        (c) => c.charCodeAt(0),
      );
      dt.items.add(new File([png], 'dot.png', { type: 'image/png' }));
      dt.items.add(new File(['hello text'], 'readme.txt', { type: 'text/plain' }));
      dt.items.add(new File(['x'], 'docs/inner.txt', { type: 'text/plain' }));
      return dt;
    });
    await page.locator('.drop').dispatchEvent('drop', { dataTransfer: drop });
    await page.getByRole('status').filter({ hasText: '3 file(s) uploaded.' }).waitFor();
    await page.getByRole('button', { name: 'readme.txt', exact: true }).click();
    await expect.poll(() => page.getByLabel('File contents').textContent()).toBe('hello text');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'dot.png', exact: true }).click();
    await expect
      .poll(() =>
        page.getByRole('img', { name: 'dot.png', exact: true }).evaluate((i: HTMLImageElement) => i.naturalWidth),
      )
      .toBe(1);
    await page.getByRole('button', { name: 'Close' }).click();
    // A folder is drawn with an SVG icon (no emoji font needed), and the count says objects.
    const folder = page.getByRole('button', { name: 'Open folder docs/' });
    expect(await folder.locator('svg').boundingBox()).not.toBeNull();
    expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–3 of 3 objects');
    expect(await page.getByText(/Shown as 1 folder and 2 files/).count()).toBe(1);
    await accessible('storage-folders');
  });

  it('creates a schedule with a cron helper showing the next runs, on the real schedules API', T, async () => {
    const admin = { 'x-api-key': t.adminKey };
    const fn = await call(t, 'POST', '/api/functions', {
      headers: admin,
      body: { name: 'Cleanup', slug: 'cleanup', code: 'export default () => new Response("ok")' },
    });
    expect(fn.status).toBe(201);
    await go('/schedules', 'Schedules');
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel('Name', { exact: true }).fill('nightly');
    await page.getByLabel('Cron expression').fill('0 3 * * *');
    await expect.poll(() => page.locator('#s-next').textContent()).toMatch(/^Next runs: .*3:00/);
    await page.getByLabel('Cron expression').fill('61 * * * *');
    await expect.poll(() => page.locator('#s-next').textContent()).toContain('Not a cron expression');
    await page.getByRole('button', { name: 'daily at 03:00' }).click();
    await page.getByLabel('Function slug').fill('cleanup');
    await accessible('schedules-create');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await toast(/^Created the schedule nightly: next run /).waitFor();
    await page.getByRole('cell', { name: 'nightly', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Run now: nightly' }).click();
    await toast('Started nightly; its run is in History.').waitFor();
    const saved = (await call(t, 'GET', '/api/schedules', { headers: admin })).body as Array<Record<string, unknown>>;
    expect(saved.find((s) => s.name === 'nightly')).toMatchObject({
      cronSchedule: '0 3 * * *',
      timezone: 'UTC',
      enabled: true,
      functionSlug: 'cleanup',
    });
  });

  it('says AI is not configured, and how to configure it, instead of "No AI calls"', T, async () => {
    await go('/ai', 'AI usage');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('not configured');
    expect(await page.getByRole('status').textContent()).toContain('AI_BASE_URL');
  });

  it(
    'shows the effective configuration on Settings: values with their source, secrets only as set or not',
    T,
    async () => {
      await go('/settings', 'Settings');
      const grid = page.getByRole('region', { name: 'Effective configuration' });
      const cells = async (name: string) =>
        grid
          .getByRole('row')
          .filter({ has: page.getByRole('cell', { name, exact: true }) })
          .getByRole('cell')
          .allTextContents();
      await grid.getByRole('cell', { name: 'LOG_LEVEL', exact: true }).waitFor();
      expect(await cells('LOG_LEVEL')).toEqual(['LOG_LEVEL', 'silent', 'env', expect.stringContaining('fatal')]);
      expect(await cells('TOKEN_TTL')).toEqual(['TOKEN_TTL', '900', 'default', 'access token lifetime, seconds']);
      expect(await cells('ADMIN_API_KEY')).toEqual([
        'ADMIN_API_KEY',
        'set (hidden)',
        'env',
        expect.stringContaining('admin key override'),
      ]);
      expect(await cells('JWT_SECRET')).toEqual(['JWT_SECRET', 'not set', 'default', expect.stringContaining('HS256')]);
      expect(await cells('REDIS_URL')).toEqual([
        'REDIS_URL',
        'not set: counters in memory',
        'default',
        expect.stringContaining('rate-limit counters'),
      ]);
      expect(await cells('storage')).toEqual(['storage', 'local', 'derived', expect.stringContaining('DATA_DIR')]);
      expect(await page.content()).not.toContain(t.adminKey);
      // Auth's settings in words, values as Yes/No and lists, never the SDK's camelCase names.
      const authRows = page.getByRole('region', { name: 'Authentication settings' }).getByRole('row');
      const authRow = async (name: string) =>
        authRows
          .filter({ has: page.getByRole('cell', { name, exact: true }) })
          .getByRole('cell')
          .allTextContents();
      expect(await authRow('Password needs a digit')).toEqual(['Password needs a digit', 'No']);
      expect(await authRow('Sign-in providers')).toEqual(['Sign-in providers', 'none']);
      expect(await authRow('Minimum password length')).toEqual(['Minimum password length', '8']);
      expect(await page.getByRole('region', { name: 'Authentication settings' }).textContent()).not.toMatch(
        /requireNumber|oAuthProviders/,
      );
      await page.getByLabel('Filter variables').fill('admin');
      await expect.poll(() => grid.getByRole('row').count()).toBe(3); // the header, ADMIN_API_KEY, RATE_LIMIT_ADMIN_PER_MINUTE
      await accessible();
    },
  );

  // 60 page visits with axe-core each: 1.5-2.5 minutes on 2 shared cores, so more than T.
  it('shows settings, agents, backups and the operations pages accessibly, light and dark, at 1280 px and phone width', {
    timeout: 240_000,
  }, async () => {
    const pages: Array<[string, string]> = [
      ['/settings', 'Settings'],
      ['/agents', 'Agents'],
      ['/backups', 'Backups'],
      ['/logs', 'Logs'],
      ['/schedules', 'Schedules'],
      ['/webhooks', 'Webhooks'],
      ['/migrations', 'Migrations'],
      ['/advisor', 'Advisor'],
      ['/overview', 'Overview'],
      ['/tables/todos', 'todos'],
      ['/sql', 'SQL editor'],
      ['/users', 'Users'],
      ['/storage/media', 'media'],
      ['/tables', 'Tables'],
      ['/health', 'Health'],
    ];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      // The phone layout uses the same tokens: its contrast is checked once, in light.
      for (const width of scheme === 'light' ? [1280, 390] : [1280]) {
        await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
        for (const [p, h] of pages) {
          await go(p, h);
          if (p === '/logs') await page.getByRole('region', { name: 'Log lines' }).waitFor();
          if (p === '/settings')
            await page
              .getByRole('region', { name: 'Effective configuration' })
              .getByRole('cell', { name: 'ADMIN_API_KEY', exact: true })
              .waitFor();
          if (p === '/agents')
            expect(await page.getByLabel('Claude Code config', { exact: true }).textContent()).toContain(
              `${t.url}/api/mcp`,
            );
          // Loaded: checked (and pictured) as people see it, not its skeleton.
          await page.waitForFunction(() => !document.querySelector('.skeleton'));
          expect(await overflow(page), `${p} ${scheme} ${width}px`).toEqual([]);
          expect(await axeViolations(page), `${p} ${scheme} ${width}px`).toEqual([]);
          if (SHOTS && width === 1280)
            await page.screenshot({
              path: path.join(SHOTS, `${p.slice(1).replace('/', '-')}${scheme === 'dark' ? '-dark' : ''}.png`),
            });
        }
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems).toEqual([]);
  });
});
