/**
 * Ack means durable: kill -9 the gateway at random moments during a steady export stream, restart it on the
 * same WAL and store, and check that every acknowledged record is in Parquet in the end (count and content), in
 * the live set queries read. The shipped flush cadence runs, and the compactor merges the open hour every second.
 * Replay is asserted, not assumed: after each kill the test counts the WAL frames past the checkpoint (what the
 * next start must replay), and each restart must report exactly that many replayed exports. The last kill lands in
 * a run whose flush age is an hour, so its acknowledged exports are all past the checkpoint and that restart
 * must replay them.
 * Cycles: SLUICE_KILL_CYCLES (default 20; `npm run soak:durability` runs more).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { openWal, readCheckpoint, readWal } from '@sluice/wal';
import { post } from '../helpers/http-client.js';
import { makeRecords } from '../helpers/records.js';
import { listStoreFiles, readLiveRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const CYCLES = Number(process.env.SLUICE_KILL_CYCLES ?? 20);
const BATCH = 50;
const EXPORTERS = 3;

/** Deterministic PRNG so a failing run can be replayed from its seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** WAL frames past the checkpoint: what the next start replays. Opening the WAL heals a torn tail as the start would. */
async function framesPastCheckpoint(walDir: string): Promise<number> {
  // The gateway's default segment size, so this open never starts a segment the gateway would not have.
  const wal = await openWal({ dir: walDir, groupCommitMs: 10, segmentBytes: 134_217_728 });
  try {
    const checkpoint = await readCheckpoint(walDir);
    let frames = 0;
    for await (const frame of readWal(walDir, checkpoint?.position ?? null, wal.durablePosition())) {
      void frame;
      frames++;
    }
    return frames;
  } finally {
    await wal.close();
  }
}

/** The `exports` of the start's "sink replayed the WAL" line (it comes before /readyz answers 200). */
async function replayedExports(server: { logs: string[] }): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    for (const line of server.logs) {
      const m = /"msg":"sink replayed the WAL".*"exports":(\d+)/.exec(line);
      if (m !== null) return Number(m[1]);
    }
    if (Date.now() > deadline) throw new Error(`no replay line:\n${server.logs.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test(
  `kill -9 at random moments during a steady export stream loses no acknowledged record (${CYCLES} cycles)`,
  { timeout: 30 * 60_000 },
  async () => {
    const seed = Number(process.env.SLUICE_KILL_SEED ?? Date.now() % 1_000_000);
    const random = prng(seed);
    const dir = tempDir('kill');
    const dataDir = join(dir, 'data');
    const walDir = join(dir, 'wal');
    // The shipped flush cadence (receiver.sink.flush_interval_ms), with the compactor merging the open hour as
    // fast as it can (a sweep a second, files a second old), so kills land in flushes, manifest appends and
    // compaction commits alike.
    const compaction = { interval_secs: 1, open_hour_min_file_age_secs: 1 };
    const config = testConfigYaml({
      walDir,
      dataDir,
      flushAgeSecs: null,
      flushIntervalMs: null,
      groupCommitMs: 10,
      compaction,
    });
    // No flush within a cycle: everything the last cycle acknowledges is past the checkpoint at its kill.
    const noFlushConfig = testConfigYaml({
      walDir,
      dataDir,
      flushAgeSecs: 3600,
      flushIntervalMs: 0,
      groupCommitMs: 10,
      compaction,
    });
    // Records in the current hour, so the open-hour compaction works on them.
    const baseNs = BigInt(Date.now()) * 1_000_000n;
    const acked = new Set<number>(); // batch numbers
    let nextBatch = 0;
    let replays = 0;
    let mustReplay = 0; // frames past the checkpoint after the previous kill

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const last = cycle === CYCLES - 1;
      const server = await spawnSluice(last ? noFlushConfig : config, { dir });
      // Exports start once the replay is done, so the replay count is exactly the frames found after the kill.
      let replayed: number;
      try {
        await server.waitReady();
        replayed = await replayedExports(server);
        assert.equal(
          replayed,
          mustReplay,
          `cycle ${cycle}: replayed exports vs frames past the checkpoint (seed ${seed})`,
        );
      } catch (error) {
        await server.kill(); // never leave a gateway running behind a failed assertion
        throw error;
      }
      if (replayed > 0) replays++;
      const ackedBefore = acked.size;
      let running = true;
      const loops = Array.from({ length: EXPORTERS }, async () => {
        while (running) {
          const batch = nextBatch++;
          const body = encodeLogsProtobuf(makeRecords(BATCH, { start: batch * BATCH, baseNs }));
          try {
            const res = await post(`${server.otlpHttpUrl}/v1/logs`, body, { 'content-type': 'application/x-protobuf' });
            if (res.status === 200) acked.add(batch);
          } catch {
            // the process died mid-request: this batch was not acknowledged
            return;
          }
        }
      });
      // Up to ~2.6 s: long enough for flushes (1 s cadence) and open-hour merges to be under way when the kill lands.
      await new Promise((r) => setTimeout(r, 150 + random() * 2500));
      await server.kill();
      running = false;
      await Promise.all(loops);
      mustReplay = await framesPastCheckpoint(walDir);
      if (last) {
        const ackedInCycle = acked.size - ackedBefore;
        assert.ok(ackedInCycle > 0, `the last cycle acknowledged exports (seed ${seed})`);
        assert.ok(
          mustReplay >= ackedInCycle,
          `no flush ran, so its ${ackedInCycle} acknowledged exports are past the checkpoint`,
        );
      }
    }
    // Final clean run: replay whatever the last kill left in the WAL (it must: see above), flush, stop.
    const final = await spawnSluice(config, { dir });
    let finalReplayed: number;
    try {
      await final.waitReady();
      finalReplayed = await replayedExports(final);
      assert.equal(finalReplayed, mustReplay, `the final start replayed the last kill's WAL (seed ${seed})`);
    } catch (error) {
      await final.kill();
      throw error;
    }
    if (finalReplayed > 0) replays++;
    // The compactor must have committed at least one open-hour merge during the run (its audit record), so the
    // kills did land among compaction commits; the final run keeps going until one exists.
    const compactions = async (): Promise<number> =>
      (await listStoreFiles({ backend: 'local', root: dataDir })).filter((k) => k.endsWith('.jsonl')).length;
    const compactedBy = Date.now() + 60_000;
    while ((await compactions()) === 0 && Date.now() < compactedBy) await new Promise((r) => setTimeout(r, 250));
    const compactionCommits = await compactions();
    const exit = await final.stop();
    assert.ok(compactionCommits > 0, `no open-hour compaction committed during the run (seed ${seed})`);
    assert.equal(exit.code, 0, final.logs.join('\n'));

    // What queries see: the manifests' live sets (retired compaction inputs are not counted).
    const rows = await readLiveRows({ backend: 'local', root: dataDir });
    const expected = new Map<bigint, string>();
    for (const batch of acked) {
      for (const record of makeRecords(BATCH, { start: batch * BATCH, baseNs })) {
        expected.set(record.timeUnixNano, record.body?.kind === 'string' ? record.body.value : '');
      }
    }
    const seen = new Map<bigint, string>();
    for (const row of rows) {
      seen.set(row.record.timeUnixNano, row.record.body?.kind === 'string' ? row.record.body.value : '');
    }
    let missing = 0;
    for (const [time, body] of expected) {
      const got = seen.get(time);
      if (got === undefined) missing++;
      else assert.equal(got, body, `content of record at ${time}`);
    }
    assert.ok(acked.size > CYCLES, `the stream made progress (seed ${seed}): ${acked.size} batches acknowledged`);
    assert.equal(missing, 0, `acknowledged records missing after ${CYCLES} kill -9 cycles (seed ${seed})`);
    assert.ok(replays > 0, 'at least one restart replayed acknowledged exports from the WAL');
    console.log(
      `kill -9 cycles: ${CYCLES}, acknowledged batches: ${acked.size}, restarts that replayed exports: ${replays}, compaction commits: ${compactionCommits}, seed ${seed}`,
    );
  },
);
