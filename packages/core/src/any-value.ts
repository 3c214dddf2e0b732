/**
 * @module any-value
 * The OTLP `AnyValue` / `KeyValue` model as a discriminated union. 64-bit integers are `bigint` so that no
 * value ever passes through a lossy JS number.
 */

/** One OTLP `AnyValue`. `empty` is an AnyValue with no oneof member set. */
export type AnyValue =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'double'; readonly value: number }
  | { readonly kind: 'bytes'; readonly value: Uint8Array }
  | { readonly kind: 'array'; readonly values: readonly AnyValue[] }
  | { readonly kind: 'kvlist'; readonly values: readonly KeyValue[] }
  | { readonly kind: 'empty' };

/** One OTLP `KeyValue`. An absent `value` on the wire is represented as `{ kind: 'empty' }`. */
export interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

/** The shared empty value. */
export const EMPTY_VALUE: AnyValue = Object.freeze({ kind: 'empty' });
