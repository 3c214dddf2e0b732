/**
 * @module sink-worker
 * The sink, on its own thread: tails the WAL up to the durable position the main thread reports, decodes,
 * mines, buffers per (tenant, hour), and on a trigger writes Parquet (audit events first: the audit barrier),
 * then advances the checkpoint together with the miner snapshot, then deletes WAL segments below it.
 *
 * Every flush writes every buffered partition, so the checkpoint is always a record boundary at which the
 * miner snapshot is exact: a restart restores that snapshot and replays the WAL after it, which re-mines the
 * same records to the same template ids.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { effectiveTimeUnixNano, type LogRecord, type Result, type TemplateAuditEvent } from '@sluice/core';
import { createMiner, restoreMiner, type Miner } from '@sluice/miner';
import { decodeLogsJson, decodeLogsProtobuf } from '@sluice/otlp';
import {
  auditFileKey,
  createObjectStore,
  dataFileKey,
  encodeAuditParquet,
  encodeLogsParquet,
  uuidv7,
} from '@sluice/storage';
import {
  compareWalPositions,
  deleteSegmentsBelow,
  readCheckpoint,
  readWal,
  writeCheckpoint,
  type WalPosition,
} from '@sluice/wal';
import { PartitionBuffer } from './partition-buffer.js';
import type { FlushTrigger, FromSinkWorker, SinkWorkerData, ToSinkWorker } from './sink-protocol.js';
import { decodeWalExport } from './wal-payload.js';

function requirePort(): MessagePort {
  if (parentPort === null) throw new Error('sink-worker must run in a worker thread');
  return parentPort;
}
const port = requirePort();
const settings = workerData as SinkWorkerData;
const post = (message: FromSinkWorker): void => port.postMessage(message);

const store = createObjectStore(settings.storage);
const buffer = new PartitionBuffer();
let target: WalPosition | null = settings.replayTarget;
let consumed: WalPosition | null = null;
let shutdown: { position: WalPosition | null } | null = null;
let wake: (() => void) | null = null;
const maxPosition = (a: WalPosition | null, b: WalPosition | null): WalPosition | null =>
  a === null ? b : b === null ? a : compareWalPositions(a, b) >= 0 ? a : b;

port.on('message', (message: ToSinkWorker) => {
  if (message.type === 'durable') target = maxPosition(target, message.position);
  else shutdown = { position: message.position };
  if (message.type === 'shutdown') target = maxPosition(target, message.position);
  wake?.();
});

async function loadMiner(): Promise<Miner> {
  const checkpoint = await readCheckpoint(settings.walDir);
  if (checkpoint === null) return createMiner(settings.miner);
  consumed = checkpoint.position;
  return checkpoint.payload.length > 0 ? restoreMiner(checkpoint.payload, settings.miner) : createMiner(settings.miner);
}

function decode(encoding: 'protobuf' | 'json', body: Uint8Array): Result<LogRecord[], { message: string }> {
  return encoding === 'protobuf' ? decodeLogsProtobuf(body) : decodeLogsJson(body);
}

function ingestFrame(miner: Miner, payload: Uint8Array): void {
  const exported = decodeWalExport(payload);
  const decoded = decode(exported.encoding, exported.body);
  // Validated before the ack; a failure here means the decoder changed under a WAL. Skip it, loudly.
  if (!decoded.ok) {
    post({ type: 'parse_failures', reason: 'undecodable_wal_record', count: 1 });
    return;
  }
  const records = decoded.value;
  const share = records.length === 0 ? 0 : exported.body.length / records.length;
  const now = Date.now();
  for (const record of records) {
    buffer.add({ tenantId: exported.tenant, record, mined: miner.mine(exported.tenant, record) }, share, now);
  }
}

function groupAudit(events: readonly TemplateAuditEvent[]): Map<string, TemplateAuditEvent[]> {
  const groups = new Map<string, TemplateAuditEvent[]>();
  for (const event of events) {
    const day = event.timestampUnixNano / 86_400_000_000_000n;
    const key = `${event.tenantId}\u0000${day}`;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [event]);
    else list.push(event);
  }
  return groups;
}

let pendingAudit: TemplateAuditEvent[] = [];

async function flushAll(miner: Miner, trigger: FlushTrigger): Promise<void> {
  if (buffer.records === 0 || consumed === null) return;
  const started = performance.now();
  pendingAudit = pendingAudit.concat(miner.drainAuditEvents());
  const checkpoint = consumed;
  const snapshot = miner.snapshot();
  const partitions = buffer.takeAll();
  let records = 0;
  let bytes = 0;
  let files = 0;
  try {
    // Audit barrier: the events that define a template version are stored before rows that use it.
    for (const events of groupAudit(pendingAudit).values()) {
      const first = events[0]!;
      const encoded = await encodeAuditParquet(events);
      await store.put(auditFileKey(first.tenantId, first.timestampUnixNano, uuidv7()), encoded);
    }
    pendingAudit = [];
    for (const partition of partitions) {
      const rows = partition.rows.sort((a, b) => {
        const ta = effectiveTimeUnixNano(a.record);
        const tb = effectiveTimeUnixNano(b.record);
        return ta < tb ? -1 : ta > tb ? 1 : 0;
      });
      const encoded = await encodeLogsParquet(rows);
      const key = dataFileKey(partition.tenant, effectiveTimeUnixNano(rows[0]!.record), uuidv7());
      await store.put(key, encoded);
      records += rows.length;
      bytes += encoded.length;
      files++;
    }
  } catch (error) {
    // Put the rows back: nothing is lost, the checkpoint has not moved, and the flush is retried.
    const now = Date.now();
    for (const partition of partitions)
      for (const row of partition.rows) buffer.add(row, partition.bytes / partition.rows.length, now);
    throw error;
  }
  await writeCheckpoint(settings.walDir, checkpoint, snapshot);
  await deleteSegmentsBelow(settings.walDir, checkpoint);
  post({
    type: 'flushed',
    trigger,
    records,
    files,
    bytes,
    seconds: (performance.now() - started) / 1000,
    checkpoint,
    templates: miner.templateCount(),
  });
}

/** Flushes, retrying with backoff until it succeeds (or, at shutdown, gives up after a few tries: the WAL keeps the data). */
async function flushWithRetry(miner: Miner, trigger: FlushTrigger): Promise<boolean> {
  let delayMs = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      await flushAll(miner, trigger);
      return true;
    } catch (error) {
      post({ type: 'flush_failed', trigger, message: error instanceof Error ? error.message : String(error) });
      if (trigger === 'shutdown' && attempt >= 3) return false;
      await sleep(delayMs);
      delayMs = Math.min(delayMs * 2, 30_000);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      wake = null;
      resolve();
    }, ms);
    wake = () => {
      clearTimeout(timer);
      wake = null;
      resolve();
    };
  });
}

function dueTrigger(): FlushTrigger | null {
  if (buffer.bytes >= settings.ceilingBytes) return 'ceiling';
  if (buffer.bytes >= settings.flushBytes) return 'size';
  const oldest = buffer.oldestArrivalMs;
  if (oldest !== null && Date.now() - oldest >= settings.flushAgeSecs * 1000) return 'age';
  return null;
}

async function run(): Promise<void> {
  const miner = await loadMiner();
  let replayed = false;
  let replayedExports = 0;
  let lastBufferReport = 0;
  for (;;) {
    if (target !== null && (consumed === null || compareWalPositions(consumed, target) < 0)) {
      const until = target;
      for await (const frame of readWal(settings.walDir, consumed, until)) {
        ingestFrame(miner, frame.payload);
        consumed = frame.position;
        if (!replayed) replayedExports++;
        const due = dueTrigger();
        if (due !== null && due !== 'age') await flushWithRetry(miner, due);
      }
      // Everything through `until` is consumed, even when it held no frame (an empty WAL at startup).
      consumed = maxPosition(consumed, until);
      continue;
    }
    if (!replayed) {
      replayed = true;
      post({ type: 'replayed', exports: replayedExports });
    }
    if (shutdown !== null) {
      await flushWithRetry(miner, 'shutdown');
      post({ type: 'stopped' });
      // Closing the port lets the thread exit by itself (code 0) once pending messages are delivered.
      port.close();
      return;
    }
    const due = dueTrigger();
    if (due !== null) {
      await flushWithRetry(miner, due);
      continue;
    }
    const now = Date.now();
    if (now - lastBufferReport >= 1000) {
      lastBufferReport = now;
      post({ type: 'buffer', bytes: buffer.bytes, records: buffer.records });
    }
    const oldest = buffer.oldestArrivalMs;
    const waitMs = oldest === null ? 1000 : Math.max(10, oldest + settings.flushAgeSecs * 1000 - now);
    await sleep(Math.min(waitMs, 1000));
  }
}

run().catch((error: unknown) => {
  post({ type: 'fatal', message: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
  port.close();
});
