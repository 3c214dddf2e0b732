/**
 * @module disk-guard.test
 * Issue 13, the disk guard, end to end: the real gateway (the CLI, one process) with its WAL, then its local store,
 * on a real tmpfs the test mounts and fills (docs/design/wal.md#the-disk-guard).
 *
 * - WAL volume below `receiver.limits.min_free_disk_percent`: `/readyz` 503 naming `disk_low`, HTTP exports 503 +
 *   `Retry-After`, gRPC exports UNAVAILABLE, nothing written to the WAL, one log line; the filler deleted, ready
 *   and accepting again within seconds without a restart, and only the acknowledged records are stored.
 * - Local store volume full: exports acknowledged until `receiver.wal.max_backlog_bytes`, then 503; the sink logs
 *   the ENOSPC once and backs off; after space is freed it catches up and every acknowledged record is stored
 *   exactly once.
 *
 * Needs root (mount -t tmpfs); skipped with the reason otherwise. Every mount is unmounted in an after hook.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, Client, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post, rpcStatusMessage } from '../helpers/http-client.js';
import { readStoredRows } from '../helpers/read-store.js';
import { makeRecords } from '../helpers/records.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const TENANT = 'acme';
const PER_EXPORT = 20;

/** Mounts a tmpfs of `bytes` at `dir`; false when this process may not (not root, no CAP_SYS_ADMIN). */
function mountTmpfs(dir: string, bytes: number): boolean {
  mkdirSync(dir, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]).status === 0;
}

function unmount(dir: string): void {
  if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
}

/** Why the tests cannot run here, or false when they can. */
function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs (mount -t tmpfs)';
  const probe = tempDir('tmpfs-probe');
  const ok = mountTmpfs(probe, 1 << 20);
  if (ok) unmount(probe);
  rmSync(probe, { recursive: true, force: true });
  return ok ? false : 'mount -t tmpfs failed (no CAP_SYS_ADMIN in this container?)';
}
const SKIP = skipReason();

/** Writes zeroes to `path` until `bytes` are written or the volume is full (ENOSPC). */
function writeFiller(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    let left = bytes;
    while (left > 0) {
      try {
        left -= writeSync(fd, chunk, 0, Math.min(chunk.length, left));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return;
        throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Fills the volume of `dir` with `<dir>/filler` until `percent` of it is free. */
function fillTo(dir: string, percent: number): void {
  const s = statfsSync(dir);
  const target = Math.floor((s.blocks * s.bsize * percent) / 100);
  writeFiller(join(dir, 'filler'), s.bavail * s.bsize - target);
}

/** Bytes in the WAL's segment files. */
function walBytes(walDir: string): number {
  return readdirSync(walDir)
    .filter((n) => n.endsWith('.wal'))
    .reduce((sum, n) => sum + statSync(join(walDir, n)).size, 0);
}

/** One export of {@link PER_EXPORT} records, each carrying the attribute `tag` = `tag`. */
const exportBody = (tag: string, start: number): Buffer =>
  Buffer.from(encodeLogsProtobuf(makeRecords(PER_EXPORT, { tag, start })));

function httpExport(sluice: SluiceProcess, body: Buffer) {
  return post(`${sluice.otlpHttpUrl}/v1/logs`, body, {
    'content-type': 'application/x-protobuf',
    'x-sluice-tenant': TENANT,
  });
}

function grpcExport(sluice: SluiceProcess, body: Buffer): Promise<{ code: number; details: string }> {
  const client = new Client(sluice.otlpGrpcAddress, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set('x-sluice-tenant', TENANT);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (error: ServiceError | null) => {
        client.close();
        resolve(error === null ? { code: 0, details: '' } : { code: error.code, details: error.details });
      },
    );
  });
}

async function readyz(sluice: SluiceProcess): Promise<{ status: number; body: string }> {
  const res = await fetch(`${sluice.otlpHttpUrl}/readyz`);
  return { status: res.status, body: await res.text() };
}

/** Polls `check` every 100 ms until it returns a value, or fails after `timeoutMs` with `what`. */
async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Parsed JSON log lines whose message starts with `prefix`. */
function logLines(sluice: SluiceProcess, prefix: string): { msg: string; fields: Record<string, unknown> }[] {
  return sluice.logs.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; fields?: Record<string, unknown> };
      return entry.msg?.startsWith(prefix) === true ? [{ msg: entry.msg, fields: entry.fields ?? {} }] : [];
    } catch {
      return [];
    }
  });
}

/** The `tag` of every stored row of the test's records, sorted (a multiset). */
async function storedTags(root: string): Promise<string[]> {
  const rows = await readStoredRows({ backend: 'local', root });
  return rows
    .map((r) => r.record.attributes.find((a) => a.key === 'tag')?.value)
    .map((v) => (v?.kind === 'string' ? v.value : '?'))
    .sort();
}

const expectedTags = (tags: readonly string[]): string[] =>
  tags.flatMap((t) => Array<string>(PER_EXPORT).fill(t)).sort();

describe('the disk guard on tmpfs volumes (issue 13)', { skip: SKIP }, () => {
  const mounts: string[] = [];
  const roots: string[] = [];
  const running: SluiceProcess[] = [];
  const mount = (dir: string, bytes: number): void => {
    assert.ok(mountTmpfs(dir, bytes), `mount tmpfs at ${dir}`);
    mounts.push(dir);
  };
  const start = async (yaml: string): Promise<SluiceProcess> => {
    const sluice = await spawnSluice(yaml);
    running.push(sluice);
    await sluice.waitReady();
    return sluice;
  };

  before(() => {
    assert.equal(SKIP, false);
  });
  after(async () => {
    // The gateway first (its open files keep a mount busy), then every mount, whatever the tests did.
    for (const sluice of running) if (sluice.child.exitCode === null) await sluice.kill();
    for (const dir of mounts) unmount(dir);
    for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  });

  test('WAL volume below min_free_disk_percent: /readyz 503 disk_low, HTTP 503 + Retry-After, gRPC UNAVAILABLE, nothing written; freed, it recovers without a restart', async () => {
    const root = tempDir('disk-guard-wal');
    roots.push(root);
    const volume = join(root, 'vol');
    mount(volume, 16 << 20);
    const walDir = join(volume, 'wal');
    const dataDir = join(root, 'data');
    const sluice = await start(
      testConfigYaml({ walDir, dataDir, flushAgeSecs: 1, receiverLimits: { min_free_disk_percent: 10 } }),
    );

    assert.equal((await httpExport(sluice, exportBody('a', 0))).status, 200);
    assert.equal((await grpcExport(sluice, exportBody('b', 100))).code, GrpcStatus.OK);

    fillTo(volume, 5);
    const notReady = await eventually('/readyz 503 after filling the WAL volume', 5000, async () => {
      const r = await readyz(sluice);
      return r.status === 503 ? r : null;
    });
    assert.match(
      notReady.body,
      /^not ready: disk_low: the write-ahead log volume has [45]\.\d% free space, below receiver\.limits\.min_free_disk_percent \(10%\)\n$/,
    );
    const walBefore = walBytes(walDir);

    const refused = await httpExport(sluice, exportBody('c', 200));
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(rpcStatusMessage(refused.body), /below receiver\.limits\.min_free_disk_percent \(10%\); retry$/);
    assert.doesNotMatch(rpcStatusMessage(refused.body), new RegExp(volume), 'no server path in the answer');
    const grpcRefused = await grpcExport(sluice, exportBody('d', 300));
    assert.equal(grpcRefused.code, GrpcStatus.UNAVAILABLE);
    assert.match(grpcRefused.details, /min_free_disk_percent/);
    assert.equal(walBytes(walDir), walBefore, 'a refused export writes nothing to the WAL');

    const metrics = await (await fetch(`${sluice.otlpHttpUrl}/metrics`)).text();
    assert.match(metrics, /^sluice_ingest_batches_total\{[^}]*error_type="disk_low"[^}]*\} 1$/m);

    const tripped = logLines(sluice, 'WAL volume below receiver.limits.min_free_disk_percent');
    assert.equal(tripped.length, 1, sluice.logs.join('\n'));
    assert.equal(tripped[0]!.fields['path'], walDir);
    assert.equal(tripped[0]!.fields['min_free_disk_percent'], 10);
    assert.ok(Number(tripped[0]!.fields['free_percent']) < 10, JSON.stringify(tripped[0]));
    assert.ok(Number(tripped[0]!.fields['free_bytes']) < (16 << 20) / 10, JSON.stringify(tripped[0]));

    rmSync(join(volume, 'filler'));
    await eventually('/readyz 200 after deleting the filler', 5000, async () =>
      (await readyz(sluice)).status === 200 ? true : null,
    );
    assert.equal((await httpExport(sluice, exportBody('e', 400))).status, 200);
    assert.equal((await grpcExport(sluice, exportBody('f', 500))).code, GrpcStatus.OK);
    assert.equal(logLines(sluice, 'WAL volume free space recovered').length, 1, sluice.logs.join('\n'));
    assert.equal(logLines(sluice, 'WAL volume below').length, 1, 'one line per trip');

    const exit = await sluice.stop();
    assert.equal(exit.code, 0, sluice.logs.join('\n'));
    assert.deepEqual(
      await storedTags(dataDir),
      expectedTags(['a', 'b', 'e', 'f']),
      'the refused exports were never stored',
    );
  });

  test('local store volume full: acknowledged until max_backlog_bytes, then 503; after space is freed every acknowledged record is stored exactly once', async () => {
    const root = tempDir('disk-guard-store');
    roots.push(root);
    const volume = join(root, 'vol');
    mount(volume, 8 << 20);
    const dataDir = join(volume, 'data');
    const sluice = await start(
      testConfigYaml({
        walDir: join(root, 'wal'),
        dataDir,
        flushAgeSecs: 1,
        receiverWal: { max_backlog_bytes: 64 * 1024 },
      }),
    );
    writeFiller(join(volume, 'filler'), Number.MAX_SAFE_INTEGER);
    assert.equal(statfsSync(volume).bavail, 0, 'the store volume is full');

    const accepted: string[] = [];
    let next = 0;
    const exportNext = async () => {
      const tag = `s${next}`;
      const res = await httpExport(sluice, exportBody(tag, next++ * PER_EXPORT));
      if (res.status === 200) accepted.push(tag);
      return res;
    };
    assert.equal((await exportNext()).status, 200);
    await eventually('the sink meets ENOSPC on the store volume', 10_000, () =>
      Promise.resolve(
        logLines(sluice, 'sink flush failed: no space left on the store volume').length > 0 ? true : null,
      ),
    );
    // The WAL buffers while the store is full: acknowledged until the backlog cap, then refused.
    let refused = null;
    for (let i = 0; i < 200 && refused === null; i++) {
      const res = await exportNext();
      if (res.status !== 200) refused = res;
    }
    assert.ok(refused !== null, 'the backlog cap refuses at last');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(rpcStatusMessage(refused.body), /receiver\.wal\.max_backlog_bytes/);
    assert.ok(accepted.length >= 3, `acknowledged ${accepted.length} exports before the cap`);
    assert.equal((await readyz(sluice)).status, 200, 'a full store volume does not make the receiver unready');
    // The sink keeps retrying with back-off meanwhile; the episode is one log line.
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(logLines(sluice, 'sink flush failed').length, 1, sluice.logs.join('\n'));
    assert.deepEqual(await storedTags(dataDir), [], 'nothing stored while the volume is full');

    rmSync(join(volume, 'filler'));
    await eventually('every acknowledged record stored once', 40_000, async () => {
      const tags = await storedTags(dataDir);
      return tags.length >= accepted.length * PER_EXPORT ? tags : null;
    }).then((tags) => assert.deepEqual(tags, expectedTags(accepted)));
    assert.equal(logLines(sluice, 'sink flush succeeded again after failing').length, 1, sluice.logs.join('\n'));

    // The backlog drained with the checkpoint: ingest resumes by itself.
    await eventually('an export accepted again', 10_000, async () =>
      (await exportNext()).status === 200 ? true : null,
    );
    const exit = await sluice.stop();
    assert.equal(exit.code, 0, sluice.logs.join('\n'));
    assert.deepEqual(await storedTags(dataDir), expectedTags(accepted), 'every acknowledged record exactly once');
  });
});
