/**
 * @module zstd
 * ZSTD via @bokuweb/zstd-wasm for hyparquet (decompress) and hyparquet-writer (compress, level 3). The wasm
 * module is initialised once per thread; its linear memory only grows by the largest single page handled,
 * which is bounded by the writer's page size (128 KiB in current files, 1 MiB in older ones; a value larger
 * than a page is a page of its own), never by query or file size.
 */
import { compress, decompress, init } from '@bokuweb/zstd-wasm';

/** ZSTD level used for every column (docs/design/storage-format.md). */
export const ZSTD_LEVEL = 3;

let ready: Promise<void> | undefined;

/** Initialises the wasm module (idempotent; safe to call concurrently). */
export function ensureZstd(): Promise<void> {
  ready ??= init();
  return ready;
}

/** hyparquet-writer compressor (call {@link ensureZstd} first). */
export function zstdCompress(input: Uint8Array): Uint8Array {
  return compress(input, ZSTD_LEVEL);
}

/** hyparquet decompressor (call {@link ensureZstd} first); `outputLength` is the page's uncompressed size. */
export function zstdDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  const out = decompress(input, { defaultHeapSize: Math.max(outputLength, 1) });
  if (out.byteLength !== outputLength) {
    throw new Error(`zstd page decompressed to ${out.byteLength} bytes, expected ${outputLength}`);
  }
  return out;
}
