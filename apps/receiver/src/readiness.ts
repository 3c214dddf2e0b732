/**
 * @module readiness
 * Why the receiver is not ready, from several independent named checks (shutting down, WAL replay, the disk
 * guard, …). Each part of the receiver adds its own check; `/readyz` answers 503 while any of them gives a
 * reason, and its body names every reason that applies (`name: message`, joined with `; `).
 */

/** One reason the receiver is not ready. */
export interface NotReady {
  /** Stable token naming the check, e.g. `disk_low`. */
  readonly name: string;
  /** Why, for people. */
  readonly message: string;
}

/** The receiver's readiness checks. */
export interface Readiness {
  /** Adds a check: `reason()` returns `null` while the check passes, else why the receiver is not ready. */
  add(name: string, reason: () => string | null): void;
  /** Every check that currently fails, in the order they were added. */
  notReady(): NotReady[];
  /** `null` when every check passes, else the failing ones as `name: message` joined with `; `. */
  notReadyReason(): string | null;
}

/** Creates an empty set of readiness checks. */
export function createReadiness(): Readiness {
  const checks: { readonly name: string; readonly reason: () => string | null }[] = [];
  const notReady = (): NotReady[] =>
    checks.flatMap(({ name, reason }) => {
      const message = reason();
      return message === null ? [] : [{ name, message }];
    });
  return {
    add(name, reason) {
      if (checks.some((c) => c.name === name)) throw new Error(`readiness check ${name} added twice`);
      checks.push({ name, reason });
    },
    notReady,
    notReadyReason() {
      const failing = notReady();
      return failing.length === 0 ? null : failing.map((n) => `${n.name}: ${n.message}`).join('; ');
    },
  };
}
