// The dashboard as a newcomer meets it (issue 35), in Chromium against a real Plinth on a fresh
// database: the sidebar, the URL as the state, every page's empty state with its one next step,
// light and dark through axe-core, no console error, skeletons while loading, the theme toggle,
// the command palette, toasts, a table from a CSV file and the connect page. One browser and
// one server for the file. PLINTH_SCREENSHOTS=1 writes docs/dashboard/*.png (both themes).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import {
  axeBothThemes,
  axeViolations,
  browserAvailable,
  launch,
  overflow,
  SHOTS,
  screenshots,
  signIn,
} from './browser.js';

const T = { timeout: 60_000 };

/** Every page of the sidebar: its path, its h1, and on a fresh install the one next step it offers. */
const PAGES: Array<[string, string, string | null]> = [
  ['/tables', 'Tables', 'Create a table'],
  ['/sql', 'SQL editor', null],
  ['/migrations', 'Migrations', null],
  ['/advisor', 'Advisor', null],
  ['/users', 'Users', 'Create a user'],
  ['/sign-in', 'Sign-in methods', null],
  ['/storage', 'Storage', 'Create a bucket'],
  ['/functions', 'Functions', 'Create your first function'],
  ['/secrets', 'Secrets', 'Add a secret'],
  ['/schedules', 'Schedules', 'Create a schedule'],
  ['/webhooks', 'Webhooks', 'Create a webhook'],
  ['/overview', 'Overview', null],
  ['/logs', 'Logs', null],
  ['/email', 'Email', 'Set up SMTP'],
  ['/ai', 'AI usage', null],
  ['/health', 'Health', null],
  ['/settings', 'Settings', null],
  ['/connect', 'API keys & connect', null],
  ['/backups', 'Backups', null],
  ['/agents', 'Agents', null],
];

/** The empty pages pictured in the docs (first-<page>.png and first-<page>-dark.png). */
const PICTURED = ['/overview', '/tables', '/users', '/storage', '/functions', '/sign-in'];

/**
 * A console error the page cannot avoid: on a server Postgres (not the embedded default) the
 * Backups page's list answers 501, which the page shows as the envelope says.
 */
const unexpected = (e: string) =>
  !(backends().at(-1) !== 'embedded' && /\/dashboard\/backups: .*status of 501/.test(e));

describe.runIf(browserAvailable())('the dashboard on a fresh install, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const admin = () => ({ 'x-api-key': t.adminKey });
  const shot = async (name: string) => {
    if (!SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  };
  const go = async (p: string, heading: string) => {
    await page.goto(`${t.url}/dashboard${p}`);
    await page.getByRole('heading', { name: heading, level: 1, exact: true }).waitFor();
  };
  const toast = (text: string | RegExp) => page.getByRole('region', { name: 'Notifications' }).getByText(text);
  const palette = async (query: string) => {
    await page.keyboard.press('ControlOrMeta+k');
    const box = page.getByRole('combobox', { name: /^Search pages/ });
    await box.fill(query);
    return box;
  };

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp(backends().at(-1)!), launch()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    page = await context.newPage();
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${page.url()}: ${m.text()}`));
    await signIn(page, t.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'keeps the overview in the URL; the sidebar groups every page, one line each, the current one marked',
    T,
    async () => {
      expect(page.url()).toBe(`${t.url}/dashboard/overview`);
      const nav = page.getByRole('navigation', { name: 'Sections' });
      expect(await nav.getByRole('heading').allTextContents()).toEqual([
        'Database',
        'Auth',
        'Storage',
        'Functions',
        'Observe',
        'Project',
      ]);
      expect(await nav.getByRole('link').count()).toBe(PAGES.length);
      for (const width of [1280, 1400]) {
        await page.setViewportSize({ width, height: 800 });
        for (const a of await nav.getByRole('link').all()) {
          const box = (await a.boundingBox())!;
          expect(box.x + box.width, (await a.textContent())!).toBeLessThanOrEqual(width);
          // One line: the label is a single line box, never wrapped.
          expect(await a.locator('.label').evaluate((e) => e.getClientRects().length), (await a.textContent())!).toBe(
            1,
          );
        }
      }
      await page.setViewportSize({ width: 1280, height: 800 });
      // Every page fits at 1280×800 without scrolling the sidebar: the last link (Agents) is in sight.
      const last = (await nav.getByRole('link').last().boundingBox())!;
      const navBox = (await nav.boundingBox())!;
      expect(last.y + last.height).toBeLessThanOrEqual(Math.min(800, navBox.y + navBox.height));
      expect(await nav.evaluate((e) => e.scrollHeight <= e.clientHeight)).toBe(true);
      expect(await nav.locator('[aria-current="page"]').allTextContents()).toEqual(['Overview']);
      await nav.getByRole('link', { name: 'Webhooks', exact: true }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      expect(page.url()).toBe(`${t.url}/dashboard/webhooks`);
      expect(await nav.locator('[aria-current="page"]').allTextContents()).toEqual(['Webhooks']);
    },
  );

  it('collapses the sidebar to icons and remembers it', T, async () => {
    await page.getByRole('button', { name: 'Collapse the sidebar' }).click();
    const sidebar = page.getByRole('complementary', { name: 'Sidebar' });
    await expect.poll(async () => (await sidebar.boundingBox())!.width).toBeLessThanOrEqual(64);
    await page.reload();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    expect((await sidebar.boundingBox())!.width).toBeLessThanOrEqual(64);
    // The links keep their names (for screen readers and as tooltips).
    await page.getByRole('link', { name: 'Tables', exact: true }).click();
    await page.getByRole('heading', { name: 'Tables', level: 1 }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'sidebar-collapsed');
    await page.getByRole('button', { name: 'Expand the sidebar' }).click();
    await expect.poll(async () => (await sidebar.boundingBox())!.width).toBeGreaterThan(200);
  });

  it('says on every empty page what to do next, with one button, accessibly in light and dark, without a console error', {
    timeout: 240_000,
  }, async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [p, heading, next] of PAGES) {
        await go(p, heading);
        if (next) {
          await page
            .getByRole('main')
            .getByRole(p === '/functions' || p === '/email' ? 'link' : 'button', { name: next, exact: true })
            .waitFor();
          // One next step: each empty state offers exactly one primary button, the one named.
          const primaries = await page
            .locator('.empty-state')
            .evaluateAll((els) =>
              els.map((e) => [...e.querySelectorAll('.primary')].map((b) => b.textContent?.trim())),
            );
          expect(primaries, p).toEqual([[next]]);
        }
        await page.waitForFunction(() => !document.querySelector('.skeleton'));
        expect(await page.getByText(/Loading…/).count(), p).toBe(0);
        expect(await axeViolations(page), `${p} ${scheme}`).toEqual([]);
        if (PICTURED.includes(p)) await shot(`first-${p.slice(1)}${scheme === 'dark' ? '-dark' : ''}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(consoleErrors.filter(unexpected)).toEqual([]);
  });

  it('shows skeletons in the shape of the page while it loads, never "Loading…"', T, async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/api/database/sql', async (r) => (await held, r.continue()));
    await page.goto(`${t.url}/dashboard/tables`);
    await page.getByRole('region', { name: 'Tables' }).locator('.skeleton').first().waitFor();
    expect(await page.getByRole('region', { name: 'Tables' }).getAttribute('aria-busy')).toBe('true');
    expect(await page.getByText(/Loading…/).count()).toBe(0);
    release();
    await page.getByRole('button', { name: 'Create a table' }).waitFor();
    await page.unroute('**/api/database/sql');
  });

  it('switches to dark and back with the toggle, remembered across a reload', T, async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    const bg = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const light = await bg();
    await page.getByRole('button', { name: 'Switch to the dark theme' }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await bg()).not.toBe(light);
    await page.reload();
    await page.getByRole('button', { name: 'Switch to the light theme' }).waitFor();
    expect(
      await page.evaluate(() => [document.documentElement.dataset.theme, localStorage.getItem('plinth.theme')]),
    ).toEqual(['dark', 'dark']);
    expect(await axeViolations(page)).toEqual([]);
    await (await palette('system theme')).press('Enter');
    expect(await page.evaluate(() => document.documentElement.dataset.theme ?? null)).toBeNull();
    expect(await bg()).toBe(light);
  });

  it('jumps to pages, tables, functions, buckets and users from the command palette, and runs actions', T, async () => {
    const made = await Promise.all([
      call(t, 'POST', '/api/database/tables', {
        headers: admin(),
        body: { tableName: 'todos', columns: [{ name: 'title', type: 'string', nullable: true }] },
      }),
      call(t, 'POST', '/api/storage/buckets', { headers: admin(), body: { bucketName: 'avatars', isPublic: false } }),
      call(t, 'POST', '/api/functions', {
        headers: admin(),
        body: { name: 'Hello', slug: 'hello', code: 'export default () => new Response("hi")' },
      }),
      call(t, 'POST', '/api/auth/users', {
        headers: admin(),
        body: { email: 'ada@example.com', password: 'correct horse battery' },
      }),
    ]);
    expect(made.map((m) => m.status)).toEqual([201, 201, 201, 201]);
    await go('/overview', 'Overview');
    const box = await palette('webh');
    expect(await page.getByRole('dialog', { name: 'Command palette' }).isVisible()).toBe(true);
    expect(await axeBothThemes(page)).toEqual([]);
    await screenshots(page, 'palette');
    await box.press('Enter');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    for (const [query, option, heading, url] of [
      ['todos', 'todos', 'todos', '/tables/todos'],
      ['avatars', 'avatars', 'avatars', '/storage/avatars'],
      ['hello', 'Hello', 'Hello', '/functions/hello'],
    ]) {
      const input = await palette(query!);
      await page.getByRole('option', { name: new RegExp(`^${option}`) }).waitFor();
      await input.press('Enter');
      await page.getByRole('heading', { name: heading, level: 1, exact: true }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/dashboard${url}`);
    }
    const users = await palette('ada@');
    await page.getByRole('option', { name: /^ada@example\.com/ }).waitFor();
    await users.press('ArrowDown');
    await users.press('ArrowUp');
    expect(
      await page.getByRole('dialog', { name: 'Command palette' }).getByRole('option', { selected: true }).textContent(),
    ).toContain('ada@example.com');
    await users.press('Enter');
    await page.getByRole('dialog', { name: 'User' }).getByText('ada@example.com').first().waitFor();
    await page.keyboard.press('Escape');
    await (await palette('new table')).press('Enter');
    await page.getByRole('dialog', { name: 'New table' }).waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/tables?new=1`);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.url()).toBe(`${t.url}/dashboard/tables`);
    await (await palette('new function')).press('Enter');
    await page.getByRole('heading', { name: 'New function', level: 1 }).waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/functions/new`);
    await (await palette('open the sql')).press('Enter');
    await page.getByRole('heading', { name: 'SQL editor', level: 1 }).waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/sql`);
  });

  it('answers an action with a toast', T, async () => {
    await go('/storage', 'Storage');
    await page.getByRole('button', { name: 'New bucket' }).click();
    await page.getByLabel('Bucket name').fill('photos');
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await toast('Created the bucket photos.').waitFor();
    await page.getByRole('link', { name: 'photos' }).waitFor();
  });

  it('adds a secret, lists it masked, and deletes it after typing its name', T, async () => {
    await go('/secrets', 'Secrets');
    await page.getByRole('button', { name: 'Add a secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'New secret' });
    await dialog.getByLabel('Name').fill('STRIPE_KEY');
    await dialog.getByLabel('Value').fill('sk_live_0123456789abcdef');
    await dialog.getByRole('button', { name: 'Save secret' }).click();
    await toast('Saved the secret STRIPE_KEY.').waitFor();
    const row = page.getByRole('region', { name: 'Secrets' }).getByRole('row').filter({ hasText: 'STRIPE_KEY' });
    await row.getByText('every function').waitFor();
    expect(await row.textContent()).toContain('sk••••••••');
    expect(await page.locator('main').textContent()).not.toContain('0123456789');
    await row.getByRole('button', { name: 'Delete secret STRIPE_KEY' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete secret' });
    expect(await confirm.getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
    expect(await axeBothThemes(page)).toEqual([]);
    await confirm.getByLabel('Name').fill('STRIPE_KEY');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await toast('Deleted secret STRIPE_KEY.').waitFor();
    await page.getByRole('button', { name: 'Add a secret' }).waitFor();
    expect((await call(t, 'GET', '/api/secrets', { headers: admin() })).body).toEqual([]);
  });

  it('makes a table from a CSV file, with the column types its rows suggest', T, async () => {
    await go('/tables', 'Tables');
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'New table from a CSV file' });
    const csv = 'Name,Age,Active,Joined\nAda,36,true,2026-01-02\nGrace,45,false,2026-02-03\n';
    await dialog
      .getByLabel(/^CSV file/)
      .setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await expect.poll(() => dialog.getByLabel('Age').inputValue()).toBe('integer');
    expect([
      await dialog.getByLabel('Active').inputValue(),
      await dialog.getByLabel('Joined').inputValue(),
      await dialog.getByLabel('Name', { exact: true }).inputValue(),
    ]).toEqual(['boolean', 'date', 'string']);
    expect(await dialog.getByLabel('Table name').inputValue()).toBe('people');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Create table and import' }).click();
    await page.getByRole('heading', { name: 'people', level: 1 }).waitFor();
    await toast(/Created people and imported 2 row\(s\)/).waitFor();
    const rows = (await call(t, 'GET', '/api/database/records/people?order=age.asc', { headers: admin() })).body;
    expect(rows.map((r: Record<string, unknown>) => [r.name, r.age, r.active, r.joined])).toEqual([
      ['Ada', 36, true, '2026-01-02'],
      ['Grace', 45, false, '2026-02-03'],
    ]);
  });

  it(
    'connects an app: the URL and anon key to copy, snippets for the SDK, postgrest-js, curl and MCP filled in for this server',
    T,
    async () => {
      await go('/connect', 'API keys & connect');
      await page.getByRole('region', { name: 'Anon key' }).getByRole('button', { name: 'Copy' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(t.anonKey);
      await toast('Anon key copied.').waitFor();
      const sdk = await page.getByLabel('@insforge/sdk', { exact: true }).textContent();
      expect(sdk).toContain(`createClient({ baseUrl: '${t.url}', anonKey: '${t.anonKey}' })`);
      expect(await axeViolations(page)).toEqual([]);
      await screenshots(page, 'connect', { toasts: true });
      await page.getByRole('link', { name: 'postgrest-js', exact: true }).click();
      await expect
        .poll(() => page.getByLabel('postgrest-js', { exact: true }).textContent())
        .toContain(`new PostgrestClient('${t.url}/api/db', { headers: { apikey: '${t.anonKey}' } })`);
      expect(page.url()).toBe(`${t.url}/dashboard/connect/postgrest`);
      await page.getByRole('link', { name: 'curl', exact: true }).click();
      await expect
        .poll(() => page.getByLabel('curl', { exact: true }).textContent())
        .toContain(`curl '${t.url}/api/database/records/notes?limit=20' -H 'apikey: ${t.anonKey}'`);
      await page.getByRole('link', { name: 'AI agents (MCP)' }).click();
      for (const client of ['Claude Code', 'Cursor', 'Codex']) {
        expect(await page.getByLabel(`${client} config`, { exact: true }).textContent()).toContain(
          client === 'Codex' ? t.url : `${t.url}/api/mcp`,
        );
      }
      await page.getByRole('button', { name: 'Reveal' }).click();
      expect(await page.getByLabel('Admin key value').textContent()).toBe(t.adminKey);
      expect(consoleErrors.filter(unexpected)).toEqual([]);
    },
  );

  it('works at phone width: the sidebar is a drawer', T, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await go('/tables', 'Tables');
    const nav = page.getByRole('navigation', { name: 'Sections' });
    expect(await nav.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Open the navigation' }).click();
    await nav.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await expect.poll(() => nav.isVisible()).toBe(false);
    expect(await overflow(page)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
