/**
 * @module sink-metrics
 * Instruments of the post-ack sink: flushes (duration, records, failures), the sink buffer and the size of the
 * Parquet files it writes.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import {
  METRIC_SLUICE_SINK_BUFFER_USAGE,
  METRIC_SLUICE_SINK_FLUSH_DURATION,
  METRIC_SLUICE_SINK_FLUSH_ERRORS,
  METRIC_SLUICE_SINK_FLUSH_RECORDS,
  METRIC_SLUICE_STORAGE_PARQUET_FILE_SIZE,
  METRIC_SLUICE_INGEST_VISIBILITY_LAG,
} from './semconv.js';

/** The sink's instruments. */
export interface SinkMetrics {
  /** `sluice.sink.flush.duration` histogram, `s`; requires `sluice.sink.flush.trigger`. */
  readonly flushDuration: InstrumentFor<typeof METRIC_SLUICE_SINK_FLUSH_DURATION>;
  /** `sluice.sink.flush.records` counter, `{record}` written to object storage. */
  readonly flushRecords: InstrumentFor<typeof METRIC_SLUICE_SINK_FLUSH_RECORDS>;
  /** `sluice.sink.flush.errors` counter, `{flush}`; requires `error.type`. */
  readonly flushErrors: InstrumentFor<typeof METRIC_SLUICE_SINK_FLUSH_ERRORS>;
  /** `sluice.sink.buffer.usage` gauge, `By` buffered across tenants. */
  readonly bufferUsage: InstrumentFor<typeof METRIC_SLUICE_SINK_BUFFER_USAGE>;
  /** `sluice.storage.parquet.file.size` histogram, `By` per written file. */
  readonly parquetFileSize: InstrumentFor<typeof METRIC_SLUICE_STORAGE_PARQUET_FILE_SIZE>;
  /** `sluice.ingest.visibility_lag` histogram, `s` from ack to a stored file (one point per flush). */
  readonly visibilityLag: InstrumentFor<typeof METRIC_SLUICE_INGEST_VISIBILITY_LAG>;
}

/** Creates the sink instruments on `meter`. */
export function createSinkMetrics(meter: Meter): SinkMetrics {
  return {
    flushDuration: createInstrument(meter, METRIC_SLUICE_SINK_FLUSH_DURATION),
    flushRecords: createInstrument(meter, METRIC_SLUICE_SINK_FLUSH_RECORDS),
    flushErrors: createInstrument(meter, METRIC_SLUICE_SINK_FLUSH_ERRORS),
    bufferUsage: createInstrument(meter, METRIC_SLUICE_SINK_BUFFER_USAGE),
    parquetFileSize: createInstrument(meter, METRIC_SLUICE_STORAGE_PARQUET_FILE_SIZE),
    visibilityLag: createInstrument(meter, METRIC_SLUICE_INGEST_VISIBILITY_LAG),
  };
}
