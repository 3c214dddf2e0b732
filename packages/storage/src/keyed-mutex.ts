/**
 * @module keyed-mutex
 * In-process mutual exclusion per string key: `run(key, fn)` runs `fn` after every earlier `run` of the same key
 * has settled. Used to serialise conditional writes of one key within a process (no polling).
 */

/** A per-key FIFO lock for async critical sections. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` exclusively for `key`; resolves or rejects with `fn`'s outcome. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
