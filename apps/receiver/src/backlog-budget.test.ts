/**
 * The WAL backlog budget over a real WAL: its peak is taken at the group commit that made the frames durable, so a
 * checkpoint that drains the backlog before anyone reads it still leaves the peak behind.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareWalPositions, openWal, type WalPosition } from '@sluice/wal';
import { trackWalBacklog } from './backlog-budget.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test('the backlog peak is taken at each group commit: drained before any read, the peak still holds it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-backlog-'));
  dirs.push(dir);
  const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
  let checkpoint: WalPosition | null = null;
  const budget = trackWalBacklog(wal, () => checkpoint);
  try {
    const payload = new Uint8Array(4000).fill(7);
    const positions = await Promise.all([wal.append(payload), wal.append(payload), wal.append(payload)]);
    const framed = wal.backlogBytes(null);
    assert.ok(framed > 3 * payload.length, `three framed payloads: ${framed}`);
    // The sink stores everything and checkpoints at the last frame, before the first read of the figures.
    checkpoint = positions.reduce((a, b) => (compareWalPositions(a, b) >= 0 ? a : b));
    assert.deepEqual(budget.figures(), { used: 0, peak: framed });
  } finally {
    budget.stop();
    await wal.close();
  }
});
