/**
 * @module partition-buffer
 * The sink's in-memory buffer: rows grouped per (tenant, hour) partition, with byte estimates for the size
 * and ceiling triggers and the arrival time of the oldest row for the age trigger. Each partition packs its rows
 * into a row buffer (`@sluice/storage` `createLogRowBuffer`: typed arrays and UTF-8 byte buffers) as they are
 * added, so no record object waits on the heap for the flush (docs/design/storage-format.md, "Row buffer").
 */
import { effectiveTimeUnixNano, type LogRecord, type MinedFields } from '@sluice/core';
import { createLogRowBuffer, type LogRowBuffer } from '@sluice/storage';

/** One row to buffer: packed by {@link PartitionBuffer.add}, not kept. */
export interface BufferedRow {
  readonly tenantId: string;
  readonly record: LogRecord;
  readonly mined: MinedFields;
}

/** One (tenant, hour) partition's rows. */
export interface Partition {
  readonly tenant: string;
  /** Start of the hour, ms since the epoch (UTC). */
  readonly hourStartMs: number;
  /** The rows, packed, in arrival order. */
  readonly rows: LogRowBuffer;
  bytes: number;
}

const HOUR_NS = 3_600_000_000_000n;

/** Buffer of rows awaiting a flush. */
export class PartitionBuffer {
  readonly #partitions = new Map<string, Partition>();
  #bytes = 0;
  #records = 0;
  #oldestArrivalMs: number | null = null;

  /** Packs a row into its partition, attributing `bytes` (its share of the wire size) to it. Returns the partition. */
  add(row: BufferedRow, bytes: number, nowMs: number): Partition {
    const hourNs = effectiveTimeUnixNano(row.record) / HOUR_NS;
    const hourStartMs = Number(hourNs) * 3_600_000;
    const key = `${row.tenantId}\u0000${hourStartMs}`;
    let partition = this.#partitions.get(key);
    if (partition === undefined) {
      const rows = createLogRowBuffer(row.tenantId);
      // What an empty partition already holds counts too: a flush spread over many (tenant, hour) partitions of a
      // few rows each holds more than their wire bytes.
      partition = { tenant: row.tenantId, hourStartMs, rows, bytes: rows.heldBytes };
      this.#partitions.set(key, partition);
      this.#bytes += rows.heldBytes;
    }
    partition.rows.add(row.record, row.mined);
    partition.bytes += bytes;
    this.#bytes += bytes;
    this.#records++;
    this.#oldestArrivalMs ??= nowMs;
    return partition;
  }

  /** Estimated buffered bytes: the wire size of the buffered records, plus each partition's starting footprint. */
  get bytes(): number {
    return this.#bytes;
  }

  get records(): number {
    return this.#records;
  }

  /** Arrival time of the oldest buffered row, or null when empty. */
  get oldestArrivalMs(): number | null {
    return this.#oldestArrivalMs;
  }

  /** Removes and returns every partition, in a deterministic order (tenant, then hour). */
  takeAll(): Partition[] {
    const all = [...this.#partitions.values()].sort((a, b) =>
      a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : a.hourStartMs - b.hourStartMs,
    );
    this.#partitions.clear();
    this.#bytes = 0;
    this.#records = 0;
    this.#oldestArrivalMs = null;
    return all;
  }
}
