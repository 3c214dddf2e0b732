/**
 * ENOSPC on a real WAL volume: `sluice serve` with its WAL on an 8 MiB tmpfs that the test fills with a filler
 * file. The export whose WAL write hits ENOSPC is answered 503 + Retry-After, the WAL fences (one log line with
 * the errno), `/readyz` answers 503 naming the fence; once the filler is deleted the next export is acknowledged
 * without a restart (one "resumed" line), and after a clean stop every acknowledged record is in Parquet while
 * the refused ones are not (the fence cut them from the WAL). Needs root to mount tmpfs; skipped otherwise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post } from '../helpers/http-client.js';
import { makeRecords } from '../helpers/records.js';
import { readStoredRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

/** Records per export: their WAL frame is well over a 4 KiB page, so it cannot fit in a page already allocated. */
const BATCH = 200;

/** Mounts an 8 MiB tmpfs on a fresh directory; `null` when this process may not mount. */
function mountTmpfs(): string | null {
  const mnt = tempDir('wal-tmpfs');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt], { stdio: 'pipe' });
    return mnt;
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    return null;
  }
}

/** Writes `path` until the file system refuses with ENOSPC, in shrinking chunks, so not a page is left. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const chunk of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const bytes = Buffer.alloc(chunk, 0x5a);
      for (;;) {
        try {
          written += writeSync(fd, bytes);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** Waits (up to 10 s) until `seen()` holds: a child's log lines arrive through a pipe, after the fact they report. */
async function logged(seen: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!seen()) {
    assert.ok(Date.now() < deadline, `${what} was not logged within 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const exportOf = (batch: number): Uint8Array => encodeLogsProtobuf(makeRecords(BATCH, { start: batch * BATCH }));

test('ENOSPC on a tmpfs WAL: 503 and /readyz 503 while fenced, then acknowledged again once space is freed, without a restart; every acknowledged record is stored', async (t) => {
  const mnt = mountTmpfs();
  if (mnt === null) {
    t.skip('cannot mount tmpfs (needs root)');
    return;
  }
  const dir = tempDir('wal-enospc');
  try {
    const walDir = join(mnt, 'wal');
    mkdirSync(walDir);
    const dataDir = join(dir, 'data');
    // The disk guard is off: once its 1 s sample saw the filled volume it would refuse exports (disk_low) before
    // any WAL write could hit ENOSPC, and this test is about the fence behind it (the guard has its own test).
    const config = testConfigYaml({
      walDir,
      dataDir,
      flushAgeSecs: 1,
      groupCommitMs: 5,
      receiverLimits: { min_free_disk_percent: 0 },
    });
    const server = await spawnSluice(config, { dir });
    try {
      await server.waitReady();
      const send = (batch: number) =>
        post(`${server.otlpHttpUrl}/v1/logs`, exportOf(batch), { 'content-type': 'application/x-protobuf' });
      const acked: number[] = [];
      for (const batch of [0, 1]) {
        assert.equal((await send(batch)).status, 200);
        acked.push(batch);
      }

      const filler = join(mnt, 'filler');
      fill(filler);
      const refused = await send(2);
      assert.equal(refused.status, 503, refused.body.toString());
      assert.equal(refused.headers['retry-after'], '1');
      const fencedAt = Date.now();
      assert.equal((await send(3)).status, 503, 'refused at once while fenced');
      const ready = await fetch(`${server.otlpHttpUrl}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(await ready.text(), /write-ahead log is fenced after ENOSPC/);
      assert.equal((await fetch(`${server.otlpHttpUrl}/healthz`)).status, 200);
      const fenceLines = () => server.logs.filter((l) => l.includes('"msg":"WAL fenced'));
      // The log line travels through the child's stdio pipe, which may trail the HTTP answers on a loaded machine.
      await logged(() => fenceLines().length > 0, 'the fence line');
      assert.equal(fenceLines().length, 1, server.logs.join('\n'));
      assert.match(fenceLines()[0]!, /"errno":"ENOSPC"/);
      assert.match(fenceLines()[0]!, /"durable_position":"1:\d+"/);

      unlinkSync(filler);
      // The exporter retries its refused batch; within the fence's cadence (1 s) it is acknowledged.
      let status = 0;
      while (status !== 200) {
        assert.ok(Date.now() - fencedAt < 10_000, 'ingest did not resume within 10 s of freeing space');
        await new Promise((r) => setTimeout(r, 100));
        status = (await send(2)).status;
      }
      acked.push(2);
      assert.equal((await send(4)).status, 200);
      acked.push(4);
      assert.equal((await fetch(`${server.otlpHttpUrl}/readyz`)).status, 200);
      const resumedLines = () => server.logs.filter((l) => l.includes('"msg":"WAL resumed'));
      await logged(() => resumedLines().length > 0, 'the resumed line');
      assert.equal(resumedLines().length, 1, server.logs.join('\n'));
    } finally {
      const exit = await server.stop();
      assert.equal(exit.code, 0, server.logs.join('\n'));
    }

    const rows = await readStoredRows({ backend: 'local', root: dataDir });
    const batches = new Map<number, number>();
    for (const row of rows) {
      const batch = Number((row.record.timeUnixNano - 1_767_225_600_000_000_000n) / 1_000_000n) / BATCH;
      batches.set(Math.floor(batch), (batches.get(Math.floor(batch)) ?? 0) + 1);
    }
    for (const batch of [0, 1, 2, 4]) assert.ok((batches.get(batch) ?? 0) >= BATCH, `batch ${batch} is stored`);
    assert.equal(batches.get(3), undefined, 'a refused export was never written');
  } finally {
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } finally {
      rmSync(mnt, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
