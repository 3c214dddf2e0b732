/**
 * @module partition-buffer.test
 * The sink's byte estimate covers what its partitions hold before their rows: a flush spread over many (tenant,
 * hour) partitions of one row each is counted at more than its wire bytes, and the rows stay in their partitions.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogRowBuffer } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { PartitionBuffer } from './partition-buffer.js';

const HOUR_NS = 3_600_000_000_000n;

describe('PartitionBuffer', () => {
  test('each partition’s starting footprint is in the byte estimate, beside the rows’ wire bytes', () => {
    const empty = createLogRowBuffer('acme').heldBytes;
    assert.ok(empty > 0);
    const buffer = new PartitionBuffer();
    // One row in each of 100 hours: 100 partitions.
    const rows = Array.from(
      { length: 100 },
      (_, i) => sampleRows(1, { seed: i + 1, startNs: BigInt(i) * HOUR_NS })[0]!,
    );
    for (const r of rows) buffer.add({ tenantId: r.tenantId, record: r.record, mined: r.mined }, 10, 0);
    assert.equal(buffer.records, 100);
    assert.equal(buffer.bytes, 100 * 10 + 100 * empty);
    const all = buffer.takeAll();
    assert.equal(all.length, 100);
    assert.ok(all.every((p) => p.rows.rows === 1 && p.bytes === 10 + empty));
    assert.equal(buffer.bytes, 0);
  });

  test('a partition starts small: an empty row buffer holds a few KiB, not tens', () => {
    assert.ok(createLogRowBuffer('acme').heldBytes <= 4096, `${createLogRowBuffer('acme').heldBytes} bytes`);
  });
});
