/**
 * @module result
 * Expected outcomes are values: a small `Result` union and `assertNever` for exhaustive switches.
 */

/** Success or failure as a value. */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

/** Builds a success. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** Builds a failure. */
export function err<E>(error: E): { readonly ok: false; readonly error: E } {
  return { ok: false, error };
}

/**
 * Compile-time exhaustiveness guard for `switch` statements over unions.
 * @throws Error always: reaching it at run time is a bug.
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
