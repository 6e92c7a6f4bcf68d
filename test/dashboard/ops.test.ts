// The operations pages: the overview's request and latency charts, a migration dry run and an
// advisor fix against issue 27 and 28's shapes faked in the browser (page.route); the logs
// explorer (filters, older pages by cursor, live tail) and webhooks (create with the secret shown
// once, deliveries to a real receiver, redelivery, disable, delete) on the real API; the Backups
// page against a real server on its own embedded Postgres (create, listed until ready, download,
// delete). axe-core on each; no CSP violation.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page, Route } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { startApp, type TestApp } from '../helpers/app.js';
import { startConfiguredApp, type ConfiguredApp } from '../helpers/configured-app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { until } from '../helpers/until.js';
import { axeViolations, browserAvailable, launch, overflow, signIn } from './browser.js';

const T = { timeout: 60_000 };
const json = (r: Route, body: unknown, status = 200) =>
  r.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

describe.runIf(browserAvailable())('dashboard operations pages in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const calls: string[] = [];
  const got: Array<{ raw: string; headers: IncomingHttpHeaders }> = [];
  const receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => (got.push({ raw, headers: req.headers }), res.end('thanks')));
  });
  const admin = () => ({ 'x-api-key': t.adminKey });
  let allowed = '';

  beforeAll(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    allowed = `127.0.0.1:${(receiver.address() as { port: number }).port}`;
    [t, browser] = await Promise.all([startApp(backends().at(-1)!, { OUTBOUND_ALLOW_HOSTS: allowed }), launch()]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => /CSP violation|Refused to/.test(m.text()) && problems.push(m.text()));
    const minute = (i: number) => new Date(Date.UTC(2026, 10, 26, 0, i)).toISOString();
    await page.route('**/api/logs/stats*', (r) =>
      json(r, {
        stats: [0, 1, 2].flatMap((i) => [
          { minute: minute(i), method: 'GET', route: '/a', count: 10, errors: i, p50Ms: 5, p95Ms: 9, p99Ms: 20 + i },
          { minute: minute(i), method: 'POST', route: '/b', count: 10, errors: 0, p50Ms: 15, p95Ms: 30, p99Ms: 80 },
        ]),
      }),
    );
    await page.route('**/api/advisor/issues', (r) =>
      json(r, {
        issues: [
          {
            key: 'rls_disabled:public.notes',
            rule: 'rls_disabled',
            category: 'security',
            severity: 'critical',
            object: { type: 'table', name: 'public.notes' },
            title: 'RLS is off',
            why: 'anon reads every row',
            fixSql: 'alter table public.notes enable row level security;',
          },
        ],
      }),
    );
    await page.route('**/api/advisor/scan', (r) => (calls.push('scan'), json(r, { issues: [] })));
    await page.route('**/api/database/migrations', (r) =>
      json(r, {
        migrations: [
          { version: '20261126', name: 'init', checksum: 'ab'.repeat(32), statements: 3, appliedAt: minute(0) },
        ],
      }),
    );
    await page.route('**/api/database/migrations/dry-run', (r) => {
      calls.push(JSON.stringify(r.request().postDataJSON()));
      return json(r, {
        riskLevel: 'high',
        reasons: ['drops a column'],
        statements: [
          { sql: 'alter table a drop column b', kind: 'alter', riskLevel: 'high', reasons: ['drops a column'] },
        ],
        checksum: 'x',
        version: '20261126',
        status: 'drift',
      });
    });
    await signIn(page, t.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    receiver.close();
  });

  it('charts requests, 5xx and latency per minute on the overview', T, async () => {
    await page.getByText('Requests per minute (5xx in the second colour)').waitFor();
    expect(await page.locator('figure.chart').first().locator('rect').count()).toBe(5); // 3 minutes ok + 2 with errors
    expect(
      await page.getByRole('img', { name: /Latency per minute, ms: .*p99 \(worst route\) up to 80/ }).count(),
    ).toBe(1);
    // The axis labels are readable (the type scale, not 10 px shrunk with the SVG) and say their unit.
    const sizes = await page
      .locator('figure.chart .tick span')
      .evaluateAll((els) =>
        els.map((e) => e.getBoundingClientRect().height && parseFloat(getComputedStyle(e).fontSize)),
      );
    expect(sizes.length).toBeGreaterThan(4);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11);
    const latency = page.locator('figure.chart').filter({ hasText: 'Latency per minute' });
    expect(await latency.locator('.y-ticks').textContent()).toMatch(/^\d+ ms0 ms$/);
    expect(await axeViolations(page)).toEqual([]);
  });

  it("shows an advisor finding's fix as SQL, runs it and rescans", T, async () => {
    await t.fetch('/api/database/sql', {
      method: 'POST',
      headers: { 'x-api-key': t.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'create table public.notes (id serial primary key)' }),
    });
    await page.goto(`${t.url}/dashboard/advisor`);
    await page.getByRole('cell', { name: 'RLS is off' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Fix rls_disabled:public.notes' }).click();
    expect(await page.getByLabel('SQL to run').textContent()).toBe(
      'alter table public.notes enable row level security;',
    );
    await page.getByRole('button', { name: 'Run SQL' }).click();
    await page
      .getByRole('region', { name: 'Notifications' })
      .getByText('Fix applied; the advisor scans again.')
      .waitFor();
    await expect.poll(() => calls.includes('scan')).toBe(true);
    const schema = await (
      await t.fetch('/api/database/tables/notes/schema', { headers: { 'x-api-key': t.adminKey } })
    ).json();
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

  it(
    'pages the logs back by cursor with the filters kept, no line twice, and the live tail adds new lines on top',
    T,
    async () => {
      const write = (from: number, to: number) => {
        for (let i = from; i < to; i++) {
          t.deps.logs.write('paging', 'info', `paging line ${i}`);
          if (i % 5 === 0) t.deps.logs.write('paging', 'info', `noise ${i}`);
        }
      };
      const lines = (n: number) => Array.from({ length: n }, (_, i) => `paging line ${i}`).sort();
      write(0, 250);
      await page.goto(`${t.url}/dashboard/logs`);
      await page.getByLabel('Source').selectOption('paging');
      await page.getByLabel('Contains').fill('paging line');
      await page.getByRole('button', { name: 'Filter' }).click();
      const shown = () => page.getByRole('region', { name: 'Log lines' }).locator('td.json').allTextContents();
      await page.getByText('100 of 250 lines').waitFor();
      expect(await shown()).not.toContain('paging line 0');
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Load older' }).click();
      await page.getByText('200 of 250 lines').waitFor();
      await page.getByRole('button', { name: 'Load older' }).click();
      await page.getByText('250 of 250 lines').waitFor();
      expect(await page.getByRole('button', { name: 'Load older' }).count()).toBe(0);
      expect((await shown()).sort()).toEqual(lines(250)); // every line once, the oldest included, no noise
      await page.getByLabel('Live tail').check();
      write(250, 253);
      await page.getByText('253 of 253 lines', { exact: true }).waitFor({ timeout: 15_000 });
      expect((await shown()).slice(0, 3).sort()).toEqual(['paging line 250', 'paging line 251', 'paging line 252']);
      expect((await shown()).sort()).toEqual(lines(253));
      await page.getByLabel('Live tail').uncheck();
    },
  );

  it(
    'creates a webhook in the form, shows its secret once, lists its deliveries, redelivers, disables and deletes it',
    T,
    async () => {
      await call(t, 'POST', '/api/database/sql', {
        headers: admin(),
        body: {
          query: 'create table public.orders (id uuid primary key default gen_random_uuid(), item text, qty integer)',
        },
      });
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.goto(`${t.url}/dashboard/webhooks`);
      await page.getByText('No webhooks yet', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'New webhook' }).click();
      const form = page.getByRole('dialog', { name: 'New webhook' });
      await form.getByLabel('Name').fill('orders-hook');
      await form.getByLabel('Table').selectOption('orders');
      await form.getByLabel('UPDATE', { exact: true }).check();
      await form.getByLabel('qty', { exact: true }).check();
      await form.getByLabel('URL').fill('http://10.0.0.1/hook');
      await form.getByRole('button', { name: 'Create webhook' }).click();
      await form.getByText('OUTBOUND_NOT_ALLOWED').waitFor();
      expect(await form.getByRole('alert').textContent()).toContain('OUTBOUND_ALLOW_HOSTS');
      expect(await axeViolations(page)).toEqual([]);
      await form.getByLabel('URL').fill(`http://${allowed}/hook`);
      await form.getByRole('button', { name: 'Create webhook' }).click();
      const once = page.getByRole('dialog', { name: 'Signing secret of orders-hook' });
      await once.getByText('you will not see it again').waitFor();
      const secret = await once.getByLabel('Signing secret').inputValue();
      expect(secret).toMatch(/^whsec_/);
      expect(await axeViolations(page)).toEqual([]);
      await once.getByRole('button', { name: 'Copy secret' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await once.getByRole('button', { name: 'I have copied it' }).click();
      await page.getByRole('cell', { name: 'orders-hook', exact: true }).waitFor();
      expect(await page.content()).not.toContain(secret);
      const [hook] = (await call(t, 'GET', '/api/database/webhooks', { headers: admin() })).body;
      expect(hook).toMatchObject({
        name: 'orders-hook',
        table: 'orders',
        events: ['INSERT', 'UPDATE'],
        columns: ['qty'],
        enabled: true,
      });

      await call(t, 'POST', '/api/database/records/orders', { headers: admin(), body: [{ item: 'tea', qty: 1 }] });
      await until(
        async () =>
          (await call(t, 'GET', `/api/database/webhooks/${hook.id}/deliveries`, { headers: admin() })).body[0]
            ?.status === 'succeeded',
        15_000,
        'a delivery',
      );
      expect(() => new Webhook(secret).verify(got[0]!.raw, got[0]!.headers as Record<string, string>)).not.toThrow(); // the secret shown is the one that signs
      await page.getByRole('button', { name: 'Deliveries of orders-hook' }).click();
      const log = page.getByRole('dialog', { name: 'Deliveries of orders-hook' });
      await log.getByRole('cell', { name: 'succeeded' }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await log.getByRole('button', { name: /^Redeliver / }).click();
      await page.getByRole('region', { name: 'Notifications' }).getByText('Delivery queued again.').waitFor();
      await until(async () => got.length === 2, 15_000, 'the redelivery');
      await log.getByRole('button', { name: 'Close' }).click();

      const enabled = page.getByRole('switch', { name: 'Enabled: orders-hook' });
      await enabled.click(); // the switch follows the hook as the API answers
      await expect.poll(() => enabled.isChecked()).toBe(false);
      await page.getByRole('region', { name: 'Notifications' }).getByText('orders-hook is disabled.').waitFor();
      expect((await call(t, 'GET', `/api/database/webhooks/${hook.id}`, { headers: admin() })).body.enabled).toBe(
        false,
      );
      await page.getByRole('button', { name: 'Delete webhook orders-hook' }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete webhook' });
      await confirm.getByLabel('Name').fill('orders-hook');
      await confirm.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No webhooks yet', { exact: true }).waitFor();
      expect((await call(t, 'GET', '/api/database/webhooks', { headers: admin() })).body).toEqual([]);
      expect(problems).toEqual([]);
    },
  );
});

describe.runIf(browserAvailable())('dashboard backups page in Chromium (a server on its own embedded Postgres)', () => {
  let root: string;
  let t: ConfiguredApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const listed = async () =>
    (await (
      await t.fetch('/api/admin/backups', { headers: { 'x-api-key': t.deps.generatedAdminKey! } })
    ).json()) as Array<{ name: string; status: string }>;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'plinth-dash-backups-'));
    chmodSync(root, 0o711); // postgres runs as the user plinth when the tests run as root
    [t, browser] = await Promise.all([startConfiguredApp({ DATA_DIR: path.join(root, 'data') }), launch()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await context.addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`CSP violation: ${e.violatedDirective} blocked "${e.sample}"`),
      ),
    );
    page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (/CSP violation: style-src-attr blocked ""/.test(m.text())) return;
      if (/CSP violation|Refused to/.test(m.text())) problems.push(m.text());
    });
    await signIn(page, t.url, t.deps.generatedAdminKey!);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('creates a backup kept on the server, shows it until ready, downloads and deletes it', {
    timeout: 240_000,
  }, async () => {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Backups', exact: true })
      .click();
    await page.getByText('No backup on the server yet.').waitFor();
    await page.getByRole('button', { name: 'Create backup' }).click();
    await page
      .getByRole('region', { name: 'Notifications' })
      .getByText(/^Backup started/)
      .waitFor();
    // The new row is listed at once (running), and the page refreshes it until it is ready.
    await page
      .getByRole('region', { name: 'Backups kept on the server' })
      .getByRole('cell', { name: /^plinth-backup-.*\.tar\.gz$/ })
      .waitFor();
    await page.getByRole('cell', { name: 'ready', exact: true }).waitFor({ timeout: 120_000 });
    const [kept] = await listed();
    expect(kept).toMatchObject({ status: 'ready' });
    expect(await page.getByRole('button', { name: 'Create backup' }).isEnabled()).toBe(true);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 });
        expect(await overflow(page)).toEqual([]);
        expect(await axeViolations(page), `${scheme} ${width}px`).toEqual([]);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: `Download ${kept!.name}` }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(kept!.name);
    await page
      .getByRole('region', { name: 'Notifications' })
      .getByText(`${kept!.name} downloaded`, { exact: false })
      .waitFor();

    await page.getByRole('button', { name: `Delete ${kept!.name}` }).click();
    await page.getByRole('dialog', { name: 'Delete backup' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No backup on the server yet.').waitFor();
    expect(await listed()).toEqual([]);
    expect(problems).toEqual([]);
  });
});
