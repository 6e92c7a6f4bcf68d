/**
 * How often a poll with nothing to do (the webhook relay with no enabled hook, the schedule
 * clock with no enabled schedule) looks whether that changed: a change made on this instance
 * wakes it at once; one made on another instance is worked there, and here within this time.
 */
export const IDLE_CHECK_MS = 5000;

/** Lets a poll rest while `nothingToDo` says so, asking it at most every `everyMs`. */
export class IdleGate {
  private idle = false;
  private checkAt = 0;

  constructor(
    private readonly nothingToDo: () => Promise<boolean>,
    private readonly everyMs = IDLE_CHECK_MS,
  ) {}

  /** Whether the poll should run now. */
  async due(): Promise<boolean> {
    if (Date.now() >= this.checkAt) {
      this.checkAt = Date.now() + this.everyMs;
      this.idle = await this.nothingToDo().catch(() => false);
    }
    return !this.idle;
  }

  /** Something changed here: poll again from now on. */
  wake(): void {
    this.idle = false;
    this.checkAt = Date.now() + this.everyMs;
  }
}
