// The dashboard's Email page (issue #40 item 5) in Chromium against a real Plinth whose SMTP
// server (a real `smtp-server`) is down, then up: mail sent through the API and a test email
// from the page fail after their attempts (EMAIL_MAX_ATTEMPTS=2, 1 s apart), show as failed with
// their error, are resent from the list and from the side panel, and show as sent once the server
// is back. Also the empty state, the URL as the state, the command palette, the auth email
// templates (edit, preview, save, back to built-in), axe-core in light and dark, no console error.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { call } from '../helpers/http.js';
import { type Smtp, smtpServer } from '../helpers/smtp.js';
import { axeViolations, browserAvailable, launch, overflow, screenshots, signIn } from './browser.js';

const T = { timeout: 90_000 };

describe.runIf(browserAvailable())('the Email page in Chromium, with a real SMTP server down then up', () => {
  let t: TestApp;
  let smtp: Smtp;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const admin = () => ({ 'x-api-key': t.adminKey });
  const messages = async (status?: string) =>
    (await call(t, 'GET', `/api/email/messages${status ? `?status=${status}` : ''}`, { headers: admin() }))
      .body as Array<{ id: string; subject: string; status: string; attempts: number }>;
  const grid = () => page.getByRole('region', { name: 'Email', exact: true });
  const row = (subject: string) => grid().getByRole('row').filter({ hasText: subject });
  const toast = (text: string | RegExp) => page.getByRole('region', { name: 'Notifications' }).getByText(text);
  /** axe-core in light and in dark (the page is in light before and after). */
  const axeBoth = async (what: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(page), `${what} ${scheme}`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  };

  beforeAll(async () => {
    smtp = await smtpServer(); // down: nothing listens on its port yet
    [t, browser] = await Promise.all([
      startApp(backends().at(-1)!, {
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        MAIL_FROM: 'App <app@example.com>',
        EMAIL_MAX_ATTEMPTS: '2',
        EMAIL_RETRY_DELAY_SECONDS: '1',
      }),
      launch(),
    ]);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${page.url()}: ${m.text()}`));
    await signIn(page, t.url, t.adminKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.down();
  });

  it('is in the sidebar under Observe and says what to do next when no mail was sent', T, async () => {
    const nav = page.getByRole('navigation', { name: 'Sections' });
    await nav.getByRole('link', { name: 'Email', exact: true }).click();
    await page.getByRole('heading', { name: 'Email', level: 1 }).waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/email`);
    expect(await nav.getByRole('list', { name: 'Observe' }).getByRole('link').allTextContents()).toContain('Email');
    expect(await nav.locator('[aria-current="page"]').allTextContents()).toEqual(['Email']);
    await page.getByText('No email yet', { exact: true }).waitFor();
    // SMTP is configured here: the next step is a test email (without SMTP it is "Set up SMTP", first-run.test.ts).
    await page.getByRole('main').getByRole('button', { name: 'Send a test email', exact: true }).last().waitFor();
    await axeBoth('empty');
  });

  it('shows mail that failed after its attempts, marked, with its error, and the URL keeps the filter', T, async () => {
    const r = await call(t, 'POST', '/api/email/send-raw', {
      headers: admin(),
      body: { to: 'customer@example.com', subject: 'Your order shipped', text: 'It is on its way.' },
    });
    expect(r.status).toBe(200);
    // A test email from the page, while the server is still down.
    await page.getByRole('button', { name: 'Send a test email' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Send a test email' });
    expect(page.url()).toBe(`${t.url}/dashboard/email?test=1`);
    await dialog.getByLabel('To').fill('me@example.com');
    await dialog.getByRole('button', { name: 'Send' }).click();
    await toast('Test email queued to me@example.com.').waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/email`);
    // The list follows the queued mail by itself until both have failed (2 attempts each).
    await row('Your order shipped').getByText('failed', { exact: true }).waitFor({ timeout: 30_000 });
    await row('Test email from Plinth').getByText('failed', { exact: true }).waitFor({ timeout: 30_000 });
    expect((await messages('failed')).map((m) => m.subject).sort()).toEqual([
      'Test email from Plinth',
      'Your order shipped',
    ]);
    await page.getByRole('status').filter({ hasText: '2 emails failed' }).waitFor();
    expect(await row('Your order shipped').textContent()).toMatch(/ECONNREFUSED/);
    // The last error wraps in its cell instead of being cut off at one line; its title has it whole.
    const lastError = row('Your order shipped').locator('.wrap-text');
    expect(
      await lastError.evaluate((e) => [e.scrollWidth <= e.clientWidth + 1, getComputedStyle(e).whiteSpace]),
    ).toEqual([true, 'normal']);
    expect(await lastError.getAttribute('title')).toMatch(/ECONNREFUSED/);
    // ...and is not hidden under the sticky actions column at 1280 px.
    const [errBox, actBox] = [
      (await lastError.boundingBox())!,
      (await row('Your order shipped').locator('td.act').boundingBox())!,
    ];
    expect(errBox.x + errBox.width).toBeLessThanOrEqual(actBox.x + 1);
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    expect(page.url()).toBe(`${t.url}/dashboard/email?status=failed`);
    await page.reload();
    await row('Your order shipped').waitFor();
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('failed');
    expect(
      await grid()
        .getByRole('button', { name: /^Resend / })
        .count(),
    ).toBe(2);
    await axeBoth('failed list');
    await screenshots(page, 'email');
    // At phone width nothing sticks out past the screen (the grid scrolls inside its box).
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await overflow(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('opens a mail in a side panel whose URL can be shared', T, async () => {
    await row('Your order shipped')
      .getByRole('button', { name: /^Open / })
      .click();
    const panel = page.getByRole('dialog', { name: 'Email' });
    await panel.getByText('customer@example.com').waitFor();
    expect(page.url()).toMatch(/\/dashboard\/email\?status=failed&open=[0-9a-f-]{36}$/);
    expect(await panel.locator('pre').textContent()).toMatch(/ECONNREFUSED/);
    expect(await panel.getByText('the admin key').count()).toBe(1);
    await axeBoth('panel');
    await screenshots(page, 'email-panel');
    await panel.getByRole('button', { name: 'Close' }).click();
    expect(page.url()).toBe(`${t.url}/dashboard/email?status=failed`);
  });

  it('resends a failed mail from the list once SMTP is back (confirmed, a toast) and shows it sent', T, async () => {
    await smtp.up();
    await row('Your order shipped')
      .getByRole('button', { name: /^Resend / })
      .click();
    const confirm = page.getByRole('dialog', { name: 'Resend this email' });
    await confirm.getByText('failed after 2 attempts').waitFor();
    await confirm.getByRole('button', { name: 'Resend' }).click();
    await toast(/^Queued again: “Your order shipped” to customer@example.com/).waitFor();
    await expect.poll(() => smtp.got.some((g) => g.to[0] === 'customer@example.com'), { timeout: 20_000 }).toBe(true);
    await page.getByLabel('Status', { exact: true }).selectOption('');
    expect(page.url()).toBe(`${t.url}/dashboard/email`);
    await row('Your order shipped').getByText('sent', { exact: true }).waitFor({ timeout: 15_000 });
    expect(
      await row('Your order shipped')
        .getByRole('button', { name: /^Resend / })
        .count(),
    ).toBe(0);
    expect((await messages('sent')).map((m) => m.subject)).toEqual(['Your order shipped']);
  });

  it('resends from the side panel, which follows the mail until it is sent', T, async () => {
    await row('Test email from Plinth')
      .getByRole('button', { name: /^Open / })
      .click();
    const panel = page.getByRole('dialog', { name: 'Email' });
    await panel.getByRole('button', { name: 'Resend' }).click();
    await page.getByRole('dialog', { name: 'Resend this email' }).getByRole('button', { name: 'Resend' }).click();
    await toast(/^Queued again: “Test email from Plinth”/).waitFor();
    await panel.getByText('sent', { exact: true }).waitFor({ timeout: 20_000 });
    await panel.getByText('Cannot be resent. It was sent').waitFor();
    expect(smtp.got.some((g) => g.to[0] === 'me@example.com' && /Plinth sends mail/.test(g.raw))).toBe(true);
    await panel.getByRole('button', { name: 'Close' }).click();
    await page.getByText('2 emails failed').waitFor({ state: 'detached' });
  });

  it('reaches failed email from the command palette', T, async () => {
    await page.keyboard.press('ControlOrMeta+k');
    await page.getByRole('combobox', { name: /^Search pages/ }).fill('failed email');
    await page.keyboard.press('Enter');
    await page.getByText('No failed email', { exact: true }).waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/email?status=failed`);
  });

  it('edits an auth email template with a preview, saves it and goes back to the built-in text', T, async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    expect(page.url()).toBe(`${t.url}/dashboard/email/templates`);
    const tpl = page.getByRole('region', { name: 'Email templates' });
    await tpl.getByRole('row').filter({ hasText: 'Email verification code' }).getByText('built-in').waitFor();
    expect(await tpl.getByRole('row').count()).toBe(4); // the header and three templates
    await axeBoth('templates');
    await page.getByRole('button', { name: 'Edit Email verification code' }).click();
    expect(page.url()).toBe(`${t.url}/dashboard/email/templates?edit=verification`);
    const editor = page.getByRole('dialog', { name: 'Edit template Email verification code' });
    await editor.getByLabel('Subject').fill('Welcome! Your code is {{code}}');
    await editor.getByRole('button', { name: 'Preview' }).click();
    await editor.getByRole('region', { name: 'Preview' }).getByText('Welcome! Your code is 123456').waitFor();
    await axeBoth('template editor');
    await screenshots(page, 'email-templates');
    await editor.getByRole('button', { name: 'Save' }).click();
    await toast('Saved the template “Email verification code”.').waitFor();
    expect(page.url()).toBe(`${t.url}/dashboard/email/templates`);
    await tpl.getByRole('row').filter({ hasText: 'Welcome! Your code is {{code}}' }).getByText('custom').waitFor();
    const saved = await call(t, 'GET', '/api/email/templates/verification', { headers: admin() });
    expect(saved.body).toMatchObject({ custom: true, subject: 'Welcome! Your code is {{code}}' });
    await page.getByRole('button', { name: 'Edit Email verification code' }).click();
    await editor.getByRole('button', { name: 'Back to built-in' }).click();
    await page
      .getByRole('dialog', { name: 'Back to the built-in text' })
      .getByRole('button', { name: 'Use the built-in text' })
      .click();
    await toast('“Email verification code” uses the built-in text again.').waitFor();
    await tpl.getByRole('row').filter({ hasText: 'Email verification code' }).getByText('built-in').waitFor();
    expect((await call(t, 'GET', '/api/email/templates/verification', { headers: admin() })).body.custom).toBe(false);
    expect(consoleErrors).toEqual([]);
  });
});
