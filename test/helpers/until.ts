/** Polls `probe` until it returns true; fails after `timeoutMs`. Returns the time it took. */
export async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await probe().catch(() => false)) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
