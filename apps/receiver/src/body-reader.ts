/**
 * @module body-reader
 * Reads a request body under two caps: the wire size (Content-Length checked before reading; chunked bodies
 * counted while reading — the OTel JS HTTP exporters always send chunked) and the decompressed size (gzip
 * bombs). Gunzip runs on libuv's thread pool, not on the event loop.
 */
import type { IncomingMessage } from 'node:http';
import { gunzip } from 'node:zlib';

/** Outcome of reading a body. */
export type BodyReadResult =
  | { readonly status: 'ok'; readonly body: Uint8Array }
  | { readonly status: 'too_large'; readonly message: string }
  | { readonly status: 'invalid'; readonly message: string }
  | { readonly status: 'aborted' };

/** Caps for {@link readBody}. */
export interface BodyLimits {
  readonly maxRequestBytes: number;
  readonly maxDecompressedBytes: number;
}

/** Reads (and, when `gzip`, inflates) a request body within its caps. Never buffers past `maxRequestBytes`. */
export async function readBody(req: IncomingMessage, gzip: boolean, limits: BodyLimits): Promise<BodyReadResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limits.maxRequestBytes) {
    return {
      status: 'too_large',
      message: `request body of ${declared} bytes exceeds ${limits.maxRequestBytes} bytes (receiver.limits.max_request_bytes)`,
    };
  }
  const raw = await new Promise<Buffer | 'too_large' | 'aborted'>((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (value: Buffer | 'too_large' | 'aborted'): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > limits.maxRequestBytes) {
        // Stop reading: the caller answers 413 with `Connection: close` and the socket is discarded.
        req.pause();
        settle('too_large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(Buffer.concat(chunks, total));
    const onError = (): void => settle('aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
  if (raw === 'aborted') return { status: 'aborted' };
  if (raw === 'too_large') {
    return {
      status: 'too_large',
      message: `request body exceeds ${limits.maxRequestBytes} bytes (receiver.limits.max_request_bytes)`,
    };
  }
  if (!gzip) return { status: 'ok', body: raw };
  return inflate(raw, limits.maxDecompressedBytes);
}

/** Inflates a gzip body with a cap on the output size. */
export function inflate(raw: Uint8Array, maxDecompressedBytes: number): Promise<BodyReadResult> {
  return new Promise((resolve) => {
    gunzip(raw, { maxOutputLength: maxDecompressedBytes }, (error, out) => {
      if (error === null) return resolve({ status: 'ok', body: out });
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return resolve({
          status: 'too_large',
          message: `decompressed body exceeds ${maxDecompressedBytes} bytes (receiver.limits.max_decompressed_bytes)`,
        });
      }
      resolve({ status: 'invalid', message: 'request body is not valid gzip' });
    });
  });
}
