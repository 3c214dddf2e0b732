/**
 * @module abort-fanout
 * Many concurrent storage calls often share one caller signal (a query's deadline over hundreds of range reads).
 * One `abort` listener each would trip Node's "possible EventTarget memory leak" warning past ten, so callers
 * subscribe here instead: one listener per signal fans out to every subscriber.
 */

const subscribers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts (never if it already has: check `aborted` first). Returns the
 * unsubscribe function; call it once the callback is no longer wanted.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let set = subscribers.get(signal);
  if (set === undefined) {
    const fresh = new Set<() => void>();
    subscribers.set(signal, fresh);
    signal.addEventListener(
      'abort',
      () => {
        subscribers.delete(signal);
        for (const cb of [...fresh]) cb();
      },
      { once: true },
    );
    set = fresh;
  }
  const mine = set;
  // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
  const entry = (): void => callback();
  mine.add(entry);
  return () => {
    mine.delete(entry);
  };
}
