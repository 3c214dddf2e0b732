/**
 * @module zstd
 * ZSTD via @bokuweb/zstd-wasm for hyparquet (decompress) and hyparquet-writer (compress, level 3). The wasm
 * module is initialised once per thread; its linear memory only grows by the largest single page handled (plus, for
 * `zstdDecompressView`, the largest compressed and decompressed page kept for reuse),
 * which is bounded by the writer's page size (128 KiB in current files, 1 MiB in older ones; a value larger
 * than a page is a page of its own), never by query or file size.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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

/** The wasm module behind `decompress` (the package's own internals; the version is pinned in package.json). */
interface ZstdModule {
  readonly HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _ZSTD_decompress(dst: number, dstCapacity: number, src: number, srcSize: number): number;
  _ZSTD_isError(code: number): number;
}
// The package exports only its entry point; its module file sits beside it (the same instance `decompress` uses).
const requireHere = createRequire(import.meta.url);
const zstdModule = requireHere(join(dirname(requireHere.resolve('@bokuweb/zstd-wasm')), 'module.js')) as {
  readonly Module: ZstdModule;
};

/** This thread's buffers inside the wasm memory for {@link zstdDecompressView}, grown to the largest page met. */
let viewSrc = 0;
let viewSrcCapacity = 0;
let viewDst = 0;
let viewDstCapacity = 0;

/**
 * Decompresses one page into the decoder's own memory and returns a view of it, without copying it out: a third
 * less time than {@link zstdDecompress} on a 128 KiB page of log text, and no JS buffer. The view is valid only
 * until the next ZSTD call on this thread, so a caller reads it and is done before it decompresses again. The two
 * wasm buffers are kept, sized by the largest page met (128 KiB in current files; the page header's size, as
 * `decompress` uses it): the wasm memory grows to the largest page either way, and never shrinks.
 * @throws Error when the frame is damaged or does not decompress to `outputLength` bytes
 */
export function zstdDecompressView(input: Uint8Array, outputLength: number): Uint8Array {
  const m = zstdModule.Module;
  if (input.byteLength > viewSrcCapacity) {
    if (viewSrc !== 0) m._free(viewSrc);
    viewSrcCapacity = 0;
    viewSrc = m._malloc(input.byteLength);
    if (viewSrc === 0) throw new Error('zstd: no memory for a page');
    viewSrcCapacity = input.byteLength;
  }
  const want = Math.max(outputLength, 1);
  if (want > viewDstCapacity) {
    if (viewDst !== 0) m._free(viewDst);
    viewDstCapacity = 0;
    viewDst = m._malloc(want);
    if (viewDst === 0) throw new Error('zstd: no memory for a page');
    viewDstCapacity = want;
  }
  m.HEAPU8.set(input, viewSrc);
  const n = m._ZSTD_decompress(viewDst, want, viewSrc, input.byteLength);
  if (m._ZSTD_isError(n) !== 0) throw new Error(`zstd page failed to decompress (code ${n})`);
  if (n !== outputLength) throw new Error(`zstd page decompressed to ${n} bytes, expected ${outputLength}`);
  // HEAPU8 is read after the calls: a malloc above may have grown the memory and replaced its buffer.
  return m.HEAPU8.subarray(viewDst, viewDst + n);
}
