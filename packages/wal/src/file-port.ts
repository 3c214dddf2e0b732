/**
 * @module file-port
 * The few file-system operations the WAL's writer makes, behind one interface, so tests can fault them (EIO or
 * ENOSPC on a chosen call, a power loss that drops unsynced bytes) and record their order against the acks
 * (docs/design/wal.md, "Proofs"). {@link nodeFilePort} is the real thing and the default; every call runs on the
 * libuv pool, so the main thread never blocks on the disk.
 *
 * Recovery at open (`openWal`'s scan) and the reader use `node:fs` directly: they run before the writer exists
 * or on their own descriptors, and the fault tests rebuild a crash image on a real directory and open it for real.
 */
import * as fs from 'node:fs';

/** File operations of the WAL writer. Every method rejects with the errno error `node:fs` gives. */
export interface WalFilePort {
  /** `open(path, flags, mode)`; flags as `node:fs` takes them (`'wx+'`, `'r+'`). Returns the descriptor. */
  open(path: string, flags: string, mode?: number): Promise<number>;
  /** One positional `writev`; returns the bytes written (may be short). */
  writev(fd: number, buffers: readonly Uint8Array[], position: number): Promise<number>;
  /** Positional `read` into `buffer`; returns the bytes read. */
  read(fd: number, buffer: Uint8Array, position: number): Promise<number>;
  /** `fdatasync(fd)`. */
  fdatasync(fd: number): Promise<void>;
  /** `ftruncate(fd, length)`. */
  ftruncate(fd: number, length: number): Promise<void>;
  /** `close(fd)`. */
  close(fd: number): Promise<void>;
  /** `unlink(path)`; resolves `false` when the file did not exist. */
  unlinkIfExists(path: string): Promise<boolean>;
  /** fsyncs a directory, so that entries created or unlinked in it are durable. */
  fsyncDir(dir: string): Promise<void>;
}

const done =
  <T>(resolve: (v: T) => void, reject: (e: unknown) => void) =>
  (e: NodeJS.ErrnoException | null, v: T): void =>
    e ? reject(e) : resolve(v);

/** The real file system (`node:fs` callbacks, off the main thread). */
export const nodeFilePort: WalFilePort = {
  open: (path, flags, mode = 0o644) => new Promise((res, rej) => fs.open(path, flags, mode, done(res, rej))),
  writev: (fd, buffers, position) =>
    new Promise((res, rej) => fs.writev(fd, buffers as Uint8Array[], position, done(res, rej))),
  read: (fd, buffer, position) =>
    new Promise((res, rej) => fs.read(fd, buffer, 0, buffer.length, position, done(res, rej))),
  fdatasync: (fd) => new Promise((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res()))),
  ftruncate: (fd, length) => new Promise((res, rej) => fs.ftruncate(fd, length, (e) => (e ? rej(e) : res()))),
  close: (fd) => new Promise((res, rej) => fs.close(fd, (e) => (e ? rej(e) : res()))),
  unlinkIfExists: (path) =>
    new Promise((res, rej) =>
      fs.unlink(path, (e) => (e === null ? res(true) : e.code === 'ENOENT' ? res(false) : rej(e))),
    ),
  fsyncDir: async (dir) => {
    const h = await fs.promises.open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  },
};
