/**
 * Runs tasks one after another per key, in the order they asked; tasks of different keys
 * run side by side. Holds nothing for a key once its last task ended.
 */
export class KeyLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before ? before.then(() => mine) : mine;
    this.tails.set(key, tail);
    try {
      if (before) await before;
      return await task();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a task running or waiting (tests). */
  get size(): number {
    return this.tails.size;
  }
}
