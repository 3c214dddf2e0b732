/**
 * @module ingest-metrics
 * Instruments of the ingest path: OTLP requests and records received, request sizes, and the WAL's append and
 * group-commit latencies and backlog.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import {
  METRIC_SLUICE_INGEST_BATCHES,
  METRIC_SLUICE_INGEST_RECORDS,
  METRIC_SLUICE_INGEST_REQUEST_SIZE,
  METRIC_SLUICE_WAL_APPEND_DURATION,
  METRIC_SLUICE_WAL_BACKLOG,
  METRIC_SLUICE_WAL_SYNC_DURATION,
} from './semconv.js';

/** The receiver's and WAL's instruments. */
export interface IngestMetrics {
  /** `sluice.ingest.records` counter, `{record}`; refused records carry `error.type`. */
  readonly records: InstrumentFor<typeof METRIC_SLUICE_INGEST_RECORDS>;
  /** `sluice.ingest.batches` counter, `{batch}`: one per export request. */
  readonly batches: InstrumentFor<typeof METRIC_SLUICE_INGEST_BATCHES>;
  /** `sluice.ingest.request.size` histogram, `By` (decompressed body). */
  readonly requestSize: InstrumentFor<typeof METRIC_SLUICE_INGEST_REQUEST_SIZE>;
  /** `sluice.wal.append.duration` histogram, `s`, from append call to durable. */
  readonly walAppendDuration: InstrumentFor<typeof METRIC_SLUICE_WAL_APPEND_DURATION>;
  /** `sluice.wal.sync.duration` histogram, `s`, one fdatasync. */
  readonly walSyncDuration: InstrumentFor<typeof METRIC_SLUICE_WAL_SYNC_DURATION>;
  /** `sluice.wal.backlog` gauge, `By` ahead of the checkpoint. */
  readonly walBacklog: InstrumentFor<typeof METRIC_SLUICE_WAL_BACKLOG>;
}

/**
 * Creates the ingest and WAL instruments on `meter`.
 * @example
 * const m = createIngestMetrics(telemetry.meter);
 * m.batches.add(1, { [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_HTTP_PROTOBUF });
 */
export function createIngestMetrics(meter: Meter): IngestMetrics {
  return {
    records: createInstrument(meter, METRIC_SLUICE_INGEST_RECORDS),
    batches: createInstrument(meter, METRIC_SLUICE_INGEST_BATCHES),
    requestSize: createInstrument(meter, METRIC_SLUICE_INGEST_REQUEST_SIZE),
    walAppendDuration: createInstrument(meter, METRIC_SLUICE_WAL_APPEND_DURATION),
    walSyncDuration: createInstrument(meter, METRIC_SLUICE_WAL_SYNC_DURATION),
    walBacklog: createInstrument(meter, METRIC_SLUICE_WAL_BACKLOG),
  };
}
