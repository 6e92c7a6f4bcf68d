// Browser helpers for the dashboard tests: Debian's chromium through playwright-core, axe-core
// injected into the page, first-page JS measured from the network, signing in with the admin key.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser tests can run; with PLINTH_REQUIRE_BROWSER=1 a missing browser is a failure. */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.PLINTH_REQUIRE_BROWSER === '1') throw new Error(`${CHROMIUM} is missing and PLINTH_REQUIRE_BROWSER=1: apt-get install -y chromium`);
  console.warn(`Dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH).`);
  return false;
}

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol: the page's CSP (no inline script) does not apply.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }));
  return (result.violations as Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>)
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Records the JavaScript the page downloads: bytes and gzip-9 bytes (what a compressing proxy would send). */
export function recordScripts(page: Page): () => Promise<{ files: number; bytes: number; gzipBytes: number }> {
  const bodies: Buffer[] = [];
  const pending: Promise<unknown>[] = [];
  page.on('response', (r) => {
    if (r.url().endsWith('.js')) pending.push(r.body().then((b) => bodies.push(b), () => {}));
  });
  return async () => (await Promise.all(pending), {
    files: bodies.length,
    bytes: bodies.reduce((n, b) => n + b.length, 0),
    gzipBytes: bodies.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0),
  });
}

/** Opens the dashboard at `url` and signs in with the admin key, as a person would. */
export async function signIn(page: Page, url: string, adminKey: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('Admin API key').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}
