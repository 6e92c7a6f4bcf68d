// The operations pages against issue 27 and 28's shapes, the endpoints faked in the browser
// (page.route) so the pages are checked before those APIs are on this branch: the overview's
// request and latency charts, logs with level and text filters, an advisor fix shown as SQL
// and run, webhook deliveries and a redelivery. axe-core on each; no CSP violation. Then the
// Backups page against a real server on its own embedded Postgres: create, listed until
// ready, download, delete.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page, Route } from 'playwright-core';
import { startApp, type TestApp } from '../helpers/app.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';
import { backends } from '../helpers/db.js';
import { axeViolations, browserAvailable, launch } from './browser.js';

const T = { timeout: 60_000 };
const json = (r: Route, body: unknown, status = 200) => r.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

describe.runIf(browserAvailable())('dashboard operations pages in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const calls: string[] = [];

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp(backends().at(-1)!), launch()]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => /CSP violation|Refused to/.test(m.text()) && problems.push(m.text()));
    const minute = (i: number) => new Date(Date.UTC(2026, 10, 26, 0, i)).toISOString();
    await page.route('**/api/logs/stats*', (r) =>
      json(r, { stats: [0, 1, 2].flatMap((i) => [{ minute: minute(i), method: 'GET', route: '/a', count: 10, errors: i, p50Ms: 5, p95Ms: 9, p99Ms: 20 + i }, { minute: minute(i), method: 'POST', route: '/b', count: 10, errors: 0, p50Ms: 15, p95Ms: 30, p99Ms: 80 }]) }),
    );
    await page.route('**/api/logs/sources', (r) => json(r, { sources: [{ name: 'api', count: 2 }, { name: 'auth', count: 1 }] }));
    await page.route(/\/api\/logs\/(api|auth)\?/, (r) => {
      calls.push(r.request().url());
      return json(r, { logs: [{ id: '2', timestamp: minute(2), source: 'api', level: 'error', eventMessage: 'POST /b 500' }], total: 1, nextCursor: null });
    });
    await page.route('**/api/advisor/issues', (r) =>
      json(r, { issues: [{ key: 'rls_disabled:public.notes', rule: 'rls_disabled', category: 'security', severity: 'critical', object: { type: 'table', name: 'public.notes' }, title: 'RLS is off', why: 'anon reads every row', fixSql: 'alter table public.notes enable row level security;' }] }),
    );
    await page.route('**/api/advisor/scan', (r) => (calls.push('scan'), json(r, { issues: [] })));
    await page.route('**/api/database/webhooks', (r) => json(r, [{ id: 'h1', name: 'orders', table: 'notes', events: ['INSERT'] }]));
    await page.route('**/api/database/webhooks/h1/deliveries', (r) => json(r, [{ id: 'd1', status: 'failed', attempts: 5, responseStatus: 500 }]));
    await page.route('**/api/database/webhooks/h1/deliveries/d1/redeliver', (r) => (calls.push('redeliver'), json(r, { id: 'd2' }, 202)));
    await page.route('**/api/database/migrations', (r) => json(r, { migrations: [{ version: '20261126', name: 'init', checksum: 'ab'.repeat(32), statements: 3, appliedAt: minute(0) }] }));
    await page.route('**/api/database/migrations/dry-run', (r) => {
      calls.push(JSON.stringify(r.request().postDataJSON()));
      return json(r, { riskLevel: 'high', reasons: ['drops a column'], statements: [{ sql: 'alter table a drop column b', kind: 'alter', riskLevel: 'high', reasons: ['drops a column'] }], checksum: 'x', version: '20261126', status: 'drift' });
    });
    await page.goto(`${t.url}/dashboard/`);
    await page.getByLabel('Admin API key').fill(t.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('charts requests, 5xx and latency per minute on the overview', T, async () => {
    await page.getByText('Requests per minute (5xx in the second colour)').waitFor();
    expect(await page.locator('figure.chart').first().locator('rect').count()).toBe(5); // 3 minutes ok + 2 with errors
    expect(await page.getByRole('img', { name: /Latency per minute, ms: .*p99 \(worst route\) up to 80/ }).count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('reads logs by source, level and text', T, async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Logs', exact: true }).click();
    await page.getByRole('cell', { name: 'POST /b 500' }).waitFor();
    await page.getByLabel('Level').selectOption('error');
    await page.getByLabel('Source').selectOption('auth');
    await page.getByLabel('Contains').fill('500');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => calls.at(-1)).toMatch(/\/api\/logs\/auth\?limit=100&level=error&q=500$/);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('shows an advisor finding\'s fix as SQL, runs it and rescans', T, async () => {
    await t.fetch('/api/database/sql', { method: 'POST', headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'create table public.notes (id serial primary key)' }) });
    await page.goto(`${t.url}/dashboard/advisor`);
    await page.getByRole('cell', { name: 'RLS is off' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Fix rls_disabled:public.notes' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe('alter table public.notes enable row level security;');
    await page.getByRole('button', { name: 'Run SQL' }).click();
    await expect.poll(() => calls.includes('scan')).toBe(true);
    const schema = await (await t.fetch('/api/database/tables/notes/schema', { headers: { 'x-api-key': t.adminKey } })).json();
    expect(schema.rlsEnabled).toBe(true);
  });

  it('lists applied migrations and checks one for risk and drift', T, async () => {
    await page.goto(`${t.url}/dashboard/migrations`);
    await page.getByRole('cell', { name: 'init', exact: true }).waitFor();
    await page.getByLabel('Version (to compare with the applied one)').fill('20261126');
    await page.getByLabel('SQL', { exact: true }).fill('alter table a drop column b');
    await page.getByRole('button', { name: 'Check' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Risk high; drift');
    expect(calls.at(-1)).toBe(JSON.stringify({ sql: 'alter table a drop column b', version: '20261126' }));
    expect(await axeViolations(page)).toEqual([]);
  });

  it('lists a webhook\'s deliveries and redelivers one', T, async () => {
    await page.goto(`${t.url}/dashboard/webhooks`);
    await page.getByRole('button', { name: 'Deliveries of orders' }).click();
    await page.getByRole('cell', { name: 'failed', exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Redeliver d1' }).click();
    await expect.poll(() => calls.includes('redeliver')).toBe(true);
    expect(problems).toEqual([]);
  });
});

describe.runIf(browserAvailable())('dashboard backups page in Chromium (a server on its own embedded Postgres)', () => {
  let root: string;
  let t: ConfiguredApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const listed = async () => (await (await t.fetch('/api/admin/backups', { headers: { 'x-api-key': t.deps.generatedAdminKey! } })).json()) as Array<{ name: string; status: string }>;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'plinth-dash-backups-'));
    chmodSync(root, 0o711); // postgres runs as the user plinth when the tests run as root
    [t, browser] = await Promise.all([startConfiguredApp({ DATA_DIR: path.join(root, 'data') }), launch()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await context.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} blocked "${e.sample}"`)),
    );
    page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (/CSP violation: style-src-attr blocked ""/.test(m.text())) return;
      if (/CSP violation|Refused to/.test(m.text())) problems.push(m.text());
    });
    await page.goto(`${t.url}/dashboard/`);
    await page.getByLabel('Admin API key').fill(t.deps.generatedAdminKey!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('creates a backup kept on the server, shows it until ready, downloads and deletes it', { timeout: 240_000 }, async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Backups', exact: true }).click();
    await page.getByText('No backup on the server yet.').waitFor();
    await page.getByRole('button', { name: 'Create backup' }).click();
    // The new row is listed at once (running), and the page refreshes it until it is ready.
    await page.getByRole('region', { name: 'Backups kept on the server' }).getByRole('cell', { name: /^plinth-backup-.*\.tar\.gz$/ }).waitFor();
    await page.getByRole('cell', { name: 'ready', exact: true }).waitFor({ timeout: 120_000 });
    const [kept] = await listed();
    expect(kept).toMatchObject({ status: 'ready' });
    expect(await page.getByRole('button', { name: 'Create backup' }).isEnabled()).toBe(true);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 });
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width + 1);
        expect(await axeViolations(page), `${scheme} ${width}px`).toEqual([]);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${kept!.name}` }).click()]);
    expect(download.suggestedFilename()).toBe(kept!.name);
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`${kept!.name} downloaded`);

    await page.getByRole('button', { name: `Delete ${kept!.name}` }).click();
    await page.getByText('No backup on the server yet.').waitFor();
    expect(await listed()).toEqual([]);
    expect(problems).toEqual([]);
  });
});
