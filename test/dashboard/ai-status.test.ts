// The AI and Settings pages of a default install (no AI provider) in Chromium: no console
// error, no answer of 400 or more, and the AI state read from GET /api/ai/status (issue #40).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { browserAvailable, launch, signIn } from './browser.js';

describe.runIf(browserAvailable())('AI and Settings pages of a default install, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const asked: string[] = [];
  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp(backends().at(-1)!), launch()]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && errors.push(`${page.url()}: ${m.text()}`));
    page.on('response', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/api/')) asked.push(url.pathname);
      if (r.status() >= 400) errors.push(`${r.status()} ${url.pathname}`);
    });
    await signIn(page, t.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows "not configured" on both pages without a console error', { timeout: 60_000 }, async () => {
    await page.goto(`${t.url}/dashboard/ai`);
    await page.getByText('AI is not configured').first().waitFor();
    await page.goto(`${t.url}/dashboard/settings`);
    await page.getByRole('status').filter({ hasText: 'The AI gateway is not configured' }).waitFor();
    await page.waitForFunction(() => !document.querySelector('.skeleton'));
    expect(asked).toContain('/api/ai/status');
    expect(asked).not.toContain('/api/ai/models');
    expect(errors).toEqual([]);
  });
});
