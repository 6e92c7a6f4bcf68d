// The grid of a table's rows in Chromium against a real Plinth (issues 30 and 35): column types in
// the headers, the actions column in sight, the side panel with typed inputs and the foreign-key
// picker, keyboard moves, typed in-place editing (toggle, date, JSON, foreign key, enum; Escape,
// Tab), the sticky header and first column, resizing, CSV import and export, and deleting
// selected rows. axe-core on the grid and its editors; any CSP violation fails the run.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { axeBothThemes, browserAvailable, launch, screenshots, signIn } from './browser.js';

const T = { timeout: 60_000 };

describe.runIf(browserAvailable())('the rows grid in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  const accessible = async (name?: string) => {
    expect(await axeBothThemes(page)).toEqual([]);
    if (name) await screenshots(page, name);
  };
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
    await signIn(page, t.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'shows column types in headers, keeps the actions column on screen, edits a foreign key cell from its centre',
    T,
    async () => {
      await go('/tables/todos', 'todos');
      await page.getByRole('button', { name: 'Edit title: first' }).waitFor();
      expect(await page.getByRole('columnheader', { name: /^done/ }).textContent()).toContain('boolean');
      expect(await page.getByRole('columnheader', { name: /^author/ }).textContent()).toContain('uuid → authors');
      const del = await page.getByRole('button', { name: /^Delete row/ }).boundingBox();
      expect(del!.x + del!.width).toBeLessThanOrEqual(1280);
      const box = page.getByRole('region', { name: 'Rows of todos' });
      expect(await box.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      // The foreign key's value and its link share one line; a click on the cell's centre edits.
      const cell = page.locator('td').filter({ has: page.getByRole('link', { name: /^Open the authors row/ }) });
      const [btn, link] = [await cell.locator('button.cell').boundingBox(), await cell.getByRole('link').boundingBox()];
      expect(Math.abs(btn!.y + btn!.height / 2 - (link!.y + link!.height / 2))).toBeLessThan(4);
      const c = (await cell.boundingBox())!;
      await page.mouse.click(c.x + c.width / 2, c.y + c.height / 2);
      await page.getByLabel('New value of author').waitFor();
      await page.keyboard.press('Escape');
      await accessible('grid');
    },
  );

  it('edits a row in the side panel with typed inputs and the foreign-key picker', T, async () => {
    await page.getByRole('button', { name: /^Edit row / }).click();
    const panel = page.getByRole('dialog', { name: 'Edit row' });
    expect(await panel.locator('#edit-done').evaluate((e) => e.tagName)).toBe('SELECT');
    expect(await panel.locator('#edit-due').getAttribute('type')).toBe('date');
    expect(await panel.locator('#edit-created_at').getAttribute('type')).toBe('datetime-local');
    expect(await panel.locator('#edit-meta').evaluate((e) => e.tagName)).toBe('TEXTAREA');
    await expect.poll(() => panel.locator('#edit-mood option').allTextContents()).toEqual(['NULL', 'happy', 'sad']);
    await panel.locator('#edit-mood').selectOption('sad');
    await panel.getByLabel('Search authors').fill('grace');
    await panel.getByRole('button', { name: /^Grace Hopper/ }).click();
    await panel.locator('#edit-done').selectOption('true');
    await panel.locator('#edit-due').fill('2026-12-24');
    await panel.locator('#edit-meta').fill('{"tags": ["x"]}');
    await accessible('row-panel');
    await panel.getByRole('button', { name: 'Save row' }).click();
    await page.getByRole('switch', { name: 'done', checked: true }).waitFor();
    const [row] = await sql(
      `select a.name, t.done, t.due::text as due, t.meta, t.mood::text as mood from public.todos t join public.authors a on a.id = t.author`,
    );
    expect(row).toEqual({ name: 'Grace Hopper', done: true, due: '2026-12-24', meta: { tags: ['x'] }, mood: 'sad' });
  });

  it('moves between cells with the arrow keys', T, async () => {
    await page.getByRole('button', { name: 'Edit title: first' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('done');
    await page.keyboard.press('ArrowLeft');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Edit title: first');
  });

  it(
    'edits cells in place by type: a toggle, a date picker, a JSON editor, a foreign-key picker, an enum; Escape cancels, Tab moves on',
    T,
    async () => {
      const row = async () =>
        (
          await sql(
            `select t.title, t.done, t.due::text as due, t.meta, t.mood::text as mood, a.name as author from public.todos t left join public.authors a on a.id = t.author where t.title like 'first%'`,
          )
        )[0];
      const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
      await page.getByRole('switch', { name: 'done' }).click();
      await expect.poll(async () => (await row()).done).toBe(false);
      await page.getByRole('switch', { name: 'done', checked: false }).waitFor();
      await page.getByRole('button', { name: 'Edit due: 2026-12-24' }).click();
      expect(await page.getByLabel('New value of due').getAttribute('type')).toBe('date');
      await page.getByLabel('New value of due').fill('2027-01-15');
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await row()).due).toBe('2027-01-15');
      await page.getByRole('button', { name: /^Edit meta:/ }).click();
      const json = page.getByLabel('New value of meta');
      await json.fill('{"tags": ');
      await page.getByText(/^Not valid JSON/).waitFor();
      expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
      await accessible('grid-json');
      await json.fill('{"tags": ["y"]}');
      await page.keyboard.press('ControlOrMeta+Enter');
      await expect.poll(async () => (await row()).meta).toEqual({ tags: ['y'] });
      await page.getByRole('button', { name: /^Edit author:/ }).click();
      await page.getByRole('combobox', { name: 'New value of author' }).fill('ada');
      await page.getByRole('option', { name: /^Ada Lovelace/ }).waitFor();
      await accessible('grid-fk');
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await row()).author).toBe('Ada Lovelace');
      await page.getByRole('button', { name: 'Edit mood: sad' }).click();
      await page.getByLabel('New value of mood').selectOption('happy');
      await expect.poll(async () => (await row()).mood).toBe('happy');
      // Escape: nothing saved, focus back on the cell.
      await page.getByRole('button', { name: 'Edit title: first' }).click();
      await page.getByLabel('New value of title').fill('not kept');
      await page.keyboard.press('Escape');
      await expect.poll(focused).toBe('Edit title: first');
      expect((await row()).title).toBe('first');
      // Tab: saved, and on to the next cell.
      await page.getByRole('button', { name: 'Edit title: first' }).click();
      await page.getByLabel('New value of title').fill('first one');
      await page.keyboard.press('Tab');
      await expect.poll(focused).toBe('done');
      await expect.poll(async () => (await row()).title).toBe('first one');
      await sql(`update public.todos set title = 'first' where title = 'first one'`);
    },
  );

  it('keeps the header and the first column in sight while the grid scrolls, and resizes a column', T, async () => {
    await go('/tables/todos', 'todos');
    const region = page.getByRole('region', { name: 'Rows of todos' });
    const first = region.locator('tbody td.first').first();
    await first.waitFor();
    const before = (await first.boundingBox())!;
    await region.evaluate((el) => el.scrollBy(600, 0));
    await expect.poll(async () => (await region.evaluate((el) => el.scrollLeft)) > 0).toBe(true);
    expect(Math.abs((await first.boundingBox())!.x - before.x)).toBeLessThan(2);
    expect(
      await region
        .locator('thead th')
        .first()
        .evaluate((e) => getComputedStyle(e).position),
    ).toBe('sticky');
    await region.evaluate((el) => el.scrollTo(0, 0));
    const handle = page.getByRole('separator', { name: 'Resize column title' });
    const th = page.getByRole('columnheader', { name: /^title/ });
    const w0 = (await th.boundingBox())!.width;
    await handle.focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    await expect.poll(async () => Math.round((await th.boundingBox())!.width - w0)).toBeGreaterThanOrEqual(46);
    expect(Number(await handle.getAttribute('aria-valuenow'))).toBeGreaterThan(w0);
    const box = (await handle.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x - 60, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    await expect.poll(async () => Math.round((await th.boundingBox())!.width - w0)).toBeLessThan(0);
  });

  it('imports a CSV with a preview and per-line errors, and exports CSV and JSON', T, async () => {
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const csv = 'title,done,due\nsecond,false,2026-01-01\nthird,true,\nbroken,maybe,2026-13-45\n';
    await page
      .getByLabel(/^CSV file/)
      .setInputFiles({ name: 'todos.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('region', { name: 'Preview' }).getByText('broken').waitFor();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain('2 row(s) imported, 1 line(s) with errors');
    expect(await page.getByRole('status').textContent()).toContain('Line 4:');
    await page.getByRole('button', { name: 'Close' }).click();
    const [csvFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const text = readFileSync((await csvFile.path())!, 'utf8');
    expect(text.split('\n')[0]).toContain('title');
    expect(text).toContain('third');
    const [jsonFile] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export JSON' }).click(),
    ]);
    expect(JSON.parse(readFileSync((await jsonFile.path())!, 'utf8'))).toHaveLength(3);
  });

  it('selects rows and deletes them together, after a confirmation', T, async () => {
    await sql(`insert into public.todos (title) values ('drop me 1'), ('drop me 2')`);
    const ids = (await sql(`select id from public.todos where title like 'drop me%' order by title`)).map(
      (r: { id: string }) => r.id,
    );
    await go('/tables/todos', 'todos');
    for (const id of ids) await page.getByRole('checkbox', { name: `Select row ${id}` }).check();
    await page.getByRole('region', { name: 'Selected rows' }).getByText('2 rows selected').waitFor();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 2 rows' });
    expect(await axeBothThemes(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Delete 2 rows' }).click();
    await page.getByRole('region', { name: 'Notifications' }).getByText('Deleted 2 rows of todos.').waitFor();
    expect(await sql(`select id from public.todos where title like 'drop me%'`)).toEqual([]);
    expect(await page.getByRole('region', { name: 'Selected rows' }).count()).toBe(0);
    // The side panel stays for whole-row editing.
    await page
      .getByRole('button', { name: /^Edit row / })
      .first()
      .click();
    await page.getByRole('dialog', { name: 'Edit row' }).waitFor();
    await page.keyboard.press('Escape');
    expect(problems).toEqual([]);
  });
});
