// The dashboard in a real browser (Debian's chromium via playwright-core) against a real
// Plinth: one browser and one server for the file, pages visited in order like a user would.
// Every page passes axe-core with no serious violation; the page's CSP is never violated.
// PLINTH_SCREENSHOTS=1 writes docs/dashboard/*.png.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generateSync } from 'otplib';
import { startApp, type TestApp } from '../helpers/app.js';
import { at, call } from '../helpers/http.js';
import { backends } from '../helpers/db.js';
import { axeBothThemes, browserAvailable, launch, overflow, recordScripts, SHOTS, screenshots } from './browser.js';
import sharp from 'sharp';

const T = { timeout: 60_000 };

describe.runIf(browserAvailable())('dashboard in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const shot = (name: string) => screenshots(page, name);
  const accessible = async () => expect(await axeBothThemes(page)).toEqual([]);
  /** What an action said, in the toasts. */
  const notice = (text: string) => page.getByRole('region', { name: 'Notifications' }).getByText(text).first();
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  /** Replaces the CodeMirror editor's text (inserted at once: no auto-closed brackets). */
  const setEditor = async (text: string) => {
    await page.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.insertText(text);
  };

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp(backends().at(-1)!), launch()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    // Each CSP violation with what was blocked and where it came from (added over DevTools: the CSP does not apply).
    await context.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(
          `CSP violation: ${e.violatedDirective} blocked "${e.sample}" from ${e.sourceFile}:${e.lineNumber}`,
        ),
      ),
    );
    page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    // Chromium's own contenteditable editing (keyboard.insertText into CodeMirror) may try a style
    // attribute, from no script at all: blocked harmlessly, and not something the app does.
    page.on('console', (m) => {
      const text = m.text();
      if (/CSP violation: style-src-attr blocked "" from :0/.test(text)) return;
      if (/CSP violation|Refused to/.test(text)) problems.push(`console on ${page.url()}: ${text}`);
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("ships a small first page, interactive fast, and refuses a wrong key with the envelope's message", T, async () => {
    const scripts = recordScripts(page);
    await page.goto(`${t.url}/dashboard/`);
    await page.getByLabel('Admin API key').waitFor();
    const interactiveMs = await page.evaluate(
      () => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now()))),
    );
    const js = await scripts();
    console.log(
      `dashboard first page: ${js.files} JS file(s), ${(js.bytes / 1024).toFixed(1)} KiB, ${(js.gzipBytes / 1024).toFixed(1)} KiB gzipped; interactive after ${interactiveMs.toFixed(0)} ms`,
    );
    expect(js.gzipBytes).toBeLessThanOrEqual(100 * 1024);
    await accessible();
    await shot('signin');

    const wrong = await (await t.fetch('/api/keys/anon', { headers: { 'x-api-key': 'ik_not-the-key' } })).json();
    await page.getByLabel('Admin API key').fill('ik_not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(wrong.message);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it('signs in with the admin key, kept in sessionStorage only', T, async () => {
    await page.getByLabel('Admin API key').fill(t.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.evaluate(() => [Object.values(sessionStorage), localStorage.length])).toEqual([[t.adminKey], 0]);
  });

  it('creates a table with a JSON column', T, async () => {
    await nav('Tables');
    await page.getByRole('button', { name: 'New table' }).click();
    await page.getByLabel('Table name').fill('notes');
    await page.getByLabel('Name', { exact: true }).fill('title');
    await page.getByRole('button', { name: 'Add column' }).click();
    await page.locator('#col-1-name').fill('meta');
    await page.locator('#col-1-type').selectOption('json');
    await accessible();
    await shot('table-create');
    await page.getByRole('button', { name: 'Create table' }).click();
    await page.getByRole('heading', { name: 'notes', exact: true }).waitFor();
    const schema = await (
      await t.fetch('/api/database/tables/notes/schema', { headers: { 'x-api-key': t.adminKey } })
    ).json();
    expect(schema.columns.map((c: { name: string; type: string }) => `${c.name}:${c.type}`)).toEqual(
      expect.arrayContaining(['title:string', 'meta:json']),
    );
  });

  it('inserts, edits and deletes rows in the grid', T, async () => {
    for (const [title, meta] of [
      ['first note', '{"tags":["a"]}'],
      ['second note', ''],
    ]) {
      await page.getByRole('button', { name: 'Insert row' }).click();
      await page.locator('#ins-title').fill(title!);
      if (meta) await page.locator('#ins-meta').fill(meta);
      await page.getByRole('button', { name: 'Insert', exact: true }).click();
      await page.getByRole('button', { name: `Edit title: ${title}` }).waitFor();
    }
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–2 of 2');
    await page.getByRole('button', { name: 'Edit title: first note' }).click();
    await page.getByLabel('New value of title').fill('edited note');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Edit title: edited note' }).waitFor();
    await page.getByRole('button', { name: 'Edit meta: {"tags":["a"]}' }).waitFor();
    await accessible();
    await shot('rows');

    const second = page.getByRole('row').filter({ hasText: 'second note' });
    await second.getByRole('button', { name: /^Delete row/ }).click();
    await page.getByRole('dialog', { name: 'Delete row' }).getByRole('button', { name: 'Delete row' }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–1 of 1');
    const rows = await (await t.fetch('/api/database/records/notes', { headers: { 'x-api-key': t.adminKey } })).json();
    expect(rows.map((r: { title: string }) => r.title)).toEqual(['edited note']);
    expect(rows[0].meta).toEqual({ tags: ['a'] });
  });

  it('filters rows with an operator', T, async () => {
    await page.getByLabel('Operator').selectOption('ilike');
    await page.getByLabel('Value').fill('%nothing%');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('No rows');
    await page.getByRole('button', { name: /^Remove filter/ }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–1 of 1');
  });

  it('pages a large table 50 rows at a time, never loading it whole', T, async () => {
    const sql = (query: string) =>
      t.fetch('/api/database/sql', {
        method: 'POST',
        headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
    await sql('create table big (id serial primary key, n integer not null)');
    await sql('insert into big (n) select g from generate_series(1, 5000) g');
    const first = page.waitForRequest((r) => r.url().includes('/api/database/records/big?'));
    await page.goto(`${t.url}/dashboard/tables/big`);
    expect(new URL((await first).url()).searchParams.get('limit')).toBe('50');
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('1–50 of 5000');
    await page.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(() => page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('51–100 of 5000');
    const sort = page.getByRole('button', { name: 'n', exact: true });
    await sort.click();
    await expect.poll(() => page.getByRole('columnheader', { name: /^n/ }).getAttribute('aria-sort')).toBe('ascending');
    await sort.click();
    await page.getByRole('button', { name: 'Edit n: 5000' }).waitFor();
    expect(await page.getByRole('columnheader', { name: /^n/ }).getAttribute('aria-sort')).toBe('descending');
    expect(await page.locator('table.grid tbody tr').count()).toBe(50);
    await page.goto(`${t.url}/dashboard/tables/notes`);
  });

  it('adds a policy in the SQL editor, shows SQL errors with their position, lists the policy', T, async () => {
    await page.getByRole('link', { name: 'Schema' }).click();
    await page.getByRole('heading', { name: 'Add foreign key' }).waitFor();
    await accessible();
    await shot('schema');
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.getByText('No policies.').waitFor();
    await page.getByRole('link', { name: 'Add a policy in the SQL editor' }).click();
    await page.locator('.cm-content').waitFor();
    await setEditor('select 1 +\n  from notes');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('line 2, column 3');
    await page.getByRole('button', { name: 'Go to line 2, column 3' }).waitFor();
    await accessible();
    await shot('sql-error');
    await setEditor('create policy notes_read on public.notes for select to anon using (true)');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('status').filter({ hasText: '0 rows' }).waitFor();
    await setEditor('select title, meta from notes');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('region', { name: 'Results' }).getByText('edited note').waitFor();
    await shot('sql-results');

    await page.goto(`${t.url}/dashboard/tables/notes/policies`);
    await page.getByRole('cell', { name: 'notes_read', exact: true }).waitFor();
    await accessible();
    await shot('policies');
  });

  it('creates a bucket, uploads with the file picker, downloads the file and makes a signed link', T, async () => {
    await nav('Buckets');
    await page.getByRole('button', { name: 'New bucket' }).click();
    await page.getByLabel('Bucket name').fill('files');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await page.getByRole('button', { name: 'Make private (files)' }).waitFor();
    await accessible();
    await shot('buckets');
    await page.getByRole('link', { name: 'files' }).click();
    await page
      .getByLabel(/^Upload files/)
      .setInputFiles({ name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the dashboard') });
    await page.getByRole('cell', { name: 'hello.txt', exact: true }).waitFor();
    // An image gets a preview: a 96 px WebP rendition the server makes.
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    await page.getByLabel(/^Upload files/).setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
    const thumb = page.getByRole('img', { name: 'Preview of photo.png' });
    await thumb.waitFor();
    await page.waitForFunction(
      () => (document.querySelector('img.thumb') as HTMLImageElement | null)?.naturalWidth === 96,
    );
    await accessible();
    await shot('storage');

    // Drag and drop into a folder: a drop event carrying a file, as the browser makes one.
    await page.getByLabel('Folder', { exact: true }).fill('reports');
    await page.getByRole('button', { name: 'Open folder' }).click();
    const drop = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['q3 numbers'], 'q3.csv', { type: 'text/csv' }));
      return dt;
    });
    await page.locator('.drop').dispatchEvent('drop', { dataTransfer: drop });
    await page.getByRole('cell', { name: 'q3.csv', exact: true }).waitFor();
    await page.locator('.crumbs').getByRole('button', { name: 'files' }).click();
    await page.getByRole('button', { name: 'Open folder reports/' }).waitFor();
    const listed = await (
      await t.fetch('/api/storage/buckets/files/objects', { headers: { 'x-api-key': t.adminKey } })
    ).json();
    expect(listed.data.map((o: { key: string }) => o.key).sort()).toEqual(['hello.txt', 'photo.png', 'reports/q3.csv']);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download hello.txt' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('hello.txt');
    expect(readFileSync((await download.path())!, 'utf8')).toBe('hello from the dashboard');

    await page.getByRole('button', { name: 'Signed link to hello.txt' }).click();
    const url = await page.locator('code.url').textContent();
    expect((await call(at(url!), 'GET', '')).text).toBe('hello from the dashboard');
  });

  it("deploys a function, invokes it, follows its logs, and shows a syntax error's line", T, async () => {
    await nav('Functions');
    await page.getByRole('link', { name: 'New function' }).click();
    await page.getByLabel('Name', { exact: true }).fill('hello');
    await page.locator('.cm-content').waitFor();
    await page.getByRole('button', { name: 'Create function' }).click();
    await page.getByRole('heading', { name: 'Invoke' }).waitFor();
    await page.getByLabel('Query string').fill('?name=Ada');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByRole('status', { name: 'Response' }).textContent(), { timeout: 20_000 })
      .toContain('{"hello":"Ada"}');
    await expect.poll(() => page.getByRole('log').textContent(), { timeout: 20_000 }).toContain('hello called for Ada');
    await accessible();
    await shot('function');

    await page.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.insertText('\n)');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/line 6, column 1/);
    await page.getByRole('button', { name: 'Go to line 6, column 1' }).waitFor();
    await nav('Functions');
    await page.getByText('/functions/hello', { exact: true }).waitFor();
    await accessible();
    await shot('functions');
  });

  it('charts AI usage per day, model and user', T, async () => {
    const row = `insert into ai.usage (created_at, caller, endpoint, model, total_tokens, latency_ms, status) values (now() - $1::interval, 'admin', 'chat', $2, $3, 5, 200)`;
    for (const [ago, model, tokens] of [
      ['0 days', 'gpt-4o-mini', 120],
      ['1 day', 'gpt-4o-mini', 300],
      ['1 day', 'gpt-4o', 80],
      ['3 days', 'gpt-4o', 50],
    ] as const) {
      await t.deps.db.query(row, [ago, model, tokens]);
    }
    await nav('AI usage');
    await page.getByText('Tokens per day, by model').waitFor();
    expect(await page.locator('figure.chart').first().locator('rect').count()).toBe(4);
    await accessible();
    await shot('ai');
  });

  it('shows health with its checks and the anon key to copy', T, async () => {
    await nav('Health');
    await page.getByRole('region', { name: 'Dependency checks' }).getByRole('cell', { name: 'database' }).waitFor();
    expect(await page.getByLabel('Anon key').textContent()).toBe(t.anonKey);
    await accessible();
  });

  it('creates a user, ends their sessions and deletes them', T, async () => {
    await nav('Users');
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('cell', { name: 'ada@example.com', exact: true }).waitFor();
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).getByText('✓ verified').waitFor();
    await page.getByRole('button', { name: 'End sessions of ada@example.com' }).click();
    await notice('session(s) ended').waitFor();
    await accessible();
    await shot('users-new');
    await page.getByRole('button', { name: 'Delete ada@example.com' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ada@example.com');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'ada@example.com', exact: true }).count()).toBe(0);
  });

  it('shows MFA and anonymous users: resets the factors of one, cleans up old anonymous ones', T, async () => {
    const up = await (
      await t.fetch('/api/auth/signup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'mfa@example.com', password: 'password-1' }),
      })
    ).json();
    const bearer = { 'content-type': 'application/json', authorization: `Bearer ${up.accessToken}` };
    const f = await (await t.fetch('/api/auth/mfa/factors', { method: 'POST', headers: bearer, body: '{}' })).json();
    const code = generateSync({ secret: f.secret });
    expect(
      (
        await t.fetch(`/api/auth/mfa/factors/${f.id}/verify`, {
          method: 'POST',
          headers: bearer,
          body: JSON.stringify({ code }),
        })
      ).status,
    ).toBe(200);
    const { rows } = await t.deps.db.query<{ id: string }>(
      `insert into auth.users (email, password_hash, is_anonymous, created_at) values (null, '!none', true, now() - interval '40 days') returning id`,
    );
    const anon = `anonymous user ${rows[0]!.id.slice(0, 8)}`;
    await nav('Health');
    await nav('Users');
    const row = page.getByRole('row').filter({ hasText: 'mfa@example.com' });
    await row.getByText('TOTP on (1)').waitFor();
    await page.getByRole('button', { name: `Delete ${anon}` }).waitFor();
    await accessible();
    await shot('users-mfa');
    await page.getByRole('button', { name: 'Reset MFA of mfa@example.com' }).click();
    await notice('factor(s) removed').waitFor();
    await row.getByText('off').waitFor();
    await page.getByLabel('Anonymous users older than (days)').fill('30');
    await page.getByRole('button', { name: 'Delete them' }).click();
    await notice('1 anonymous user(s) deleted').waitFor();
    await expect.poll(() => page.getByRole('button', { name: `Delete ${anon}` }).count()).toBe(0);
  });

  it('shows where keyboard focus is', T, async () => {
    await nav('Tables');
    await page.getByRole('link', { name: 'notes' }).waitFor();
    await accessible();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement!);
      return `${s.outlineStyle} ${s.outlineWidth}`;
    });
    expect(outline).toMatch(/^solid [1-9]/);
  });

  it('works at a phone width (390 px)', T, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [p, name] of [
      ['/tables/notes', 'rows'],
      ['/functions/hello', 'function'],
      ['/storage/files', 'storage'],
    ]) {
      await page.goto(`${t.url}/dashboard${p}`);
      await page.getByRole('button', { name: 'Open the navigation' }).waitFor();
      await page.locator('main h1').first().waitFor();
      expect(await overflow(page)).toEqual([]);
      await accessible();
      if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}-phone.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs out, forgetting the key', T, async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(problems).toEqual([]);
  });
});
