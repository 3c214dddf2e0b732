/**
 * @module errors
 * The one error type the OTLP decoders return. Messages are written by Sluice (never library or parser text)
 * and are safe to show to the client in a 400 / INVALID_ARGUMENT response.
 */

/** Why a request body could not be decoded. `message` names the field and, for protobuf, the byte offset. */
export interface OtlpDecodeError {
  readonly message: string;
}

/**
 * Internal control-flow signal: thrown deep inside a decoder and caught at its public entry point, where it
 * becomes an `err(...)` result. Never escapes the package.
 */
export class DecodeFailure {
  constructor(readonly message: string) {}
}

/** Builds the public error value. */
export function decodeError(message: string): OtlpDecodeError {
  return { message };
}
