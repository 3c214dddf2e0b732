/**
 * @module errors
 * The one error class of the WAL. Callers branch on `code`, never on the message:
 * `WAL_IO`, `WAL_FENCED` (refused at once while fenced after an I/O failure) and `WAL_CLOSED` are transient for
 * an exporter (answer 503), `WAL_FRAME_TOO_LARGE` is the
 * client's fault (413), `WAL_CORRUPT` stops the process before it listens.
 */

/** Why a WAL operation failed. */
export type WalErrorCode = 'WAL_CORRUPT' | 'WAL_IO' | 'WAL_FENCED' | 'WAL_FRAME_TOO_LARGE' | 'WAL_CLOSED';

/** Options of {@link WalError}. */
export interface WalErrorOptions {
  /** The underlying error (an errno error from `node:fs`, usually). */
  readonly cause?: unknown;
  /** The file the error is about, when there is one. */
  readonly file?: string;
  /** The byte offset in `file` the error is about, when there is one. */
  readonly offset?: number;
}

/** A typed WAL failure. The message names the file and offset when known. */
export class WalError extends Error {
  override readonly name = 'WalError';
  /** Machine-readable reason. */
  readonly code: WalErrorCode;
  /** The file concerned, if any. */
  readonly file: string | undefined;
  /** The byte offset in {@link WalError.file} concerned, if any. */
  readonly offset: number | undefined;
  /** The errno name of the underlying failure (`EIO`, `ENOSPC`…), when there is one. */
  readonly errno: string | undefined;

  constructor(code: WalErrorCode, message: string, options: WalErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options.file;
    this.offset = options.offset;
    const errno = (options.cause as { code?: unknown } | undefined)?.code;
    this.errno =
      typeof errno === 'string' ? errno : options.cause instanceof WalError ? options.cause.errno : undefined;
  }
}

/** Wraps an unknown I/O failure as a `WAL_IO` error naming what was being done. */
export function ioError(what: string, cause: unknown, file?: string): WalError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new WalError('WAL_IO', `WAL ${what} failed${file === undefined ? '' : ` (${file})`}: ${detail}`, {
    cause,
    ...(file === undefined ? {} : { file }),
  });
}

/** Builds a `WAL_CORRUPT` error naming the file and byte offset. */
export function corruptError(file: string, offset: number, reason: string): WalError {
  return new WalError('WAL_CORRUPT', `WAL corrupt: ${file} at byte ${offset}: ${reason}`, { file, offset });
}
