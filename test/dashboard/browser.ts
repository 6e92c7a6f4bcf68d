// Browser helpers for the dashboard tests: Debian's chromium through playwright-core, axe-core
// injected into the page, first-page JS measured from the network, signing in with the admin key.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser tests can run; with PLINTH_REQUIRE_BROWSER=1 a missing browser is a failure. */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.PLINTH_REQUIRE_BROWSER === '1')
    throw new Error(`${CHROMIUM} is missing and PLINTH_REQUIRE_BROWSER=1: apt-get install -y chromium`);
  console.warn(
    `Dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH).`,
  );
  return false;
}

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol: the page's CSP (no inline script) does not apply.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }));
  return (result.violations as Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>)
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
}

/**
 * axeViolations in the light and then the dark theme (the system preference emulated, so open
 * dialogs, popovers and editors stay open), each prefixed with its theme; the page is light after.
 */
export async function axeBothThemes(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await settled(page);
    found.push(...(await axeViolations(page)).map((v) => `${scheme}: ${v}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await settled(page);
  return found;
}

/** Records the JavaScript the page downloads: bytes and gzip-9 bytes (what a compressing proxy would send). */
export function recordScripts(page: Page): () => Promise<{ files: number; bytes: number; gzipBytes: number }> {
  const bodies: Buffer[] = [];
  const pending: Promise<unknown>[] = [];
  page.on('response', (r) => {
    if (r.url().endsWith('.js'))
      pending.push(
        r.body().then(
          (b) => bodies.push(b),
          () => {},
        ),
      );
  });
  return async () => (
    await Promise.all(pending),
    {
      files: bodies.length,
      bytes: bodies.reduce((n, b) => n + b.length, 0),
      gzipBytes: bodies.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0),
    }
  );
}

/** Opens the dashboard at `url` and signs in with the admin key, as a person would. */
export async function signIn(page: Page, url: string, adminKey: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('Admin API key').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** What sticks out past the right edge of the viewport (nothing when the page fits its width). */
export async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= w + 1) return [];
    return [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > w + 1)
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} right=${Math.round(e.getBoundingClientRect().right)}`);
  });
}

/** Where `npm run docs:screenshots` (PLINTH_SCREENSHOTS=1) writes the pictures of the docs; null otherwise. */
export const SHOTS =
  process.env.PLINTH_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/dashboard') : null;

/**
 * With PLINTH_SCREENSHOTS=1, the page as it is now in both themes: name.png and name-dark.png
 * (the page is in light before and after). Toasts left from earlier steps are hidden unless
 * `toasts` says the picture is about one.
 */
export async function screenshots(page: Page, name: string, opts: { toasts?: boolean } = {}): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  const toasts = (v: string) =>
    page.locator('ol.toasts').evaluateAll((els, v) => els.forEach((e) => ((e as HTMLElement).style.visibility = v)), v);
  if (!opts.toasts) await toasts('hidden');
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  await page.emulateMedia({ colorScheme: 'dark' });
  await settled(page);
  await page.screenshot({ path: path.join(SHOTS, `${name}-dark.png`) });
  await page.emulateMedia({ colorScheme: 'light' });
  await settled(page);
  if (!opts.toasts) await toasts('');
}

/** Waits for the colour transitions a change of theme starts (a picture taken halfway mixes both themes). */
async function settled(page: Page): Promise<void> {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a instanceof CSSTransition)
        .map((a) => a.finished.catch(() => {})),
    ),
  );
}
