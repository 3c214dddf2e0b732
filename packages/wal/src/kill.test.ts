/**
 * @module kill.test
 * Real SIGKILL of a child process appending to the WAL; every acknowledged append must survive.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openWal } from './wal.js';
import { checkPatternPayload, readAll, removeDir, tempDir } from './testing/helpers.js';

const CHILD = fileURLToPath(new URL('./testing/append-child.js', import.meta.url));
const CYCLES = Number(process.env.SLUICE_WAL_KILL_CYCLES ?? 5);

/** Runs the child until it has acknowledged a few appends, SIGKILLs it after a random delay, returns the acks. */
function runAndKill(dir: string, firstIndex: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, String(firstIndex)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: number[] = [];
    let buf = '';
    let stderr = '';
    let armed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('ack ')) acked.push(Number(line.slice(4)));
      }
      if (!armed && acked.length >= 5) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), 20 + Math.floor(Math.random() * 200));
      }
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`child exited with ${code}/${signal}: ${stderr}`));
      else if (!armed) reject(new Error(`child killed before acknowledging anything: ${stderr}`));
      else resolve(acked);
    });
  });
}

void test(`kill -9 at a random moment loses no acknowledged append (${CYCLES} cycles)`, async (t) => {
  const dir = tempDir();
  try {
    const allAcked: number[] = [];
    let healed = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const acked = await runAndKill(dir, cycle * 1_000_000);
      allAcked.push(...acked);
      const wal = await openWal({ dir, groupCommitMs: 2, segmentBytes: 4 * 1024 * 1024 });
      if (wal.recovery.healed !== null) healed++;
      const indices = (await readAll(dir, null, wal.durablePosition())).map(checkPatternPayload);
      await wal.close();
      for (let i = 1; i < indices.length; i++) assert.ok(indices[i - 1]! < indices[i]!, 'frames are in append order');
      const present = new Set(indices);
      const missing = allAcked.filter((i) => !present.has(i));
      assert.deepEqual(missing, [], `cycle ${cycle}: acknowledged but lost`);
    }
    assert.ok(allAcked.length >= 5 * CYCLES);
    t.diagnostic(
      `${allAcked.length} acknowledged appends over ${CYCLES} kills; ${healed} recoveries healed a torn tail`,
    );
  } finally {
    removeDir(dir);
  }
});
