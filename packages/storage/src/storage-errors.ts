/**
 * @module storage-errors
 * The two storage conditions every caller must tell apart from a bug (docs/design/storage-faults.md):
 * storage that does not answer in time ({@link StorageUnavailableError}: try again later, nothing is wrong with
 * the data) and an object that is not what Sluice wrote ({@link StorageCorruptError}: trying again gives the same
 * answer). Their messages name the object key and never carry library or engine text, so a surface may show them.
 */

/** The object-store operation that failed. */
export type StorageOperation = 'put' | 'put_conditional' | 'get' | 'get_range' | 'head' | 'list' | 'delete';

/** Why a call counts as unavailable. */
export type UnavailableReason =
  /** An attempt took longer than its request timeout (or the connect timeout). */
  | 'timeout'
  /** The connection was refused, reset or closed early. */
  | 'connection'
  /** The server answered 5xx or 429 (throttled). */
  | 'server_error'
  /** The answer's body was shorter than announced. */
  | 'truncated';

/** A storage call failed on every attempt it was allowed (or was cut by a timeout the caller cannot wait out). */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
  constructor(
    /** What was asked. */
    readonly operation: StorageOperation,
    /** The object key, or the listed prefix; `null` when none applies. */
    readonly key: string | null,
    /** Attempts made. */
    readonly attempts: number,
    /** Why the last attempt failed. */
    readonly reason: UnavailableReason,
    options?: { readonly cause?: unknown },
  ) {
    super(
      `object storage unavailable: ${operation}${key !== null ? ` of ${key}` : ''} failed after ${attempts} attempt(s) (${reason.replace('_', ' ')})`,
      options?.cause !== undefined ? { cause: options.cause } : undefined,
    );
  }
}

/** What is wrong with a corrupt or foreign object. */
export type CorruptReason =
  /** A manifest that is not valid JSON, has no valid generation, or is otherwise not a manifest. */
  | 'manifest_invalid'
  /** A manifest naming anything but bare partition-local `.parquet` files (a path, `..`, another extension). */
  | 'manifest_foreign_name'
  /** A manifest naming a file that does not exist. */
  | 'manifest_missing_file'
  /** A Parquet file whose footer or pages cannot be decoded, or that is not one of ours (schema). */
  | 'parquet_unreadable'
  /** A data file whose tenant column disagrees with the tenant of its key. */
  | 'tenant_mismatch';

/** An object that is not what Sluice wrote there: damaged, truncated, foreign or naming what is not there. */
export class StorageCorruptError extends Error {
  override readonly name = 'StorageCorruptError';
  constructor(
    /** The corrupt object's key. */
    readonly key: string,
    readonly reason: CorruptReason,
    options?: { readonly cause?: unknown },
  ) {
    super(
      `corrupt object ${key}: ${reason.replaceAll('_', ' ')}`,
      options?.cause !== undefined ? { cause: options.cause } : undefined,
    );
  }
}
