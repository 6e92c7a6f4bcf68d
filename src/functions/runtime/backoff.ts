const MAX_DELAY_MS = 5_000;

/**
 * When starting function processes fails (deno missing, or exiting at once), new starts wait:
 * 200 ms after the first failure, doubling up to 5 s; a process that starts clears the count.
 */
export class SpawnBackoff {
  private failures = 0;
  private retryAt = 0;

  /** True while starts are held back. */
  get waiting(): boolean {
    return Date.now() < this.retryAt;
  }

  failed(): void {
    this.failures++;
    this.retryAt = Date.now() + Math.min(100 * 2 ** this.failures, MAX_DELAY_MS);
  }

  succeeded(): void {
    this.failures = 0;
  }
}
