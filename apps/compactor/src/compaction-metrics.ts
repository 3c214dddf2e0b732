/**
 * @module compaction-metrics
 * The compactor's instruments (names and units from the semconv registry via `createInstrument`).
 */
import {
  ATTR_SLUICE_COMPACTION_RESULT,
  ATTR_SLUICE_STORAGE_CORRUPT_REASON,
  ATTR_SLUICE_STORAGE_SEEN_BY,
  METRIC_SLUICE_COMPACTION_DURATION,
  METRIC_SLUICE_COMPACTION_FILES_DELETED,
  METRIC_SLUICE_COMPACTION_PARTITIONS,
  METRIC_SLUICE_COMPACTION_ROWS,
  METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  SLUICE_STORAGE_SEEN_BY_VALUE_COMPACTOR,
  createInstrument,
} from '@sluice/telemetry';
import type { SluiceCompactionResultValue, SluiceStorageCorruptReasonValue } from '@sluice/telemetry';

/** The OpenTelemetry `Meter` the compactor records on (the type `createInstrument` takes). */
export type CompactorMeter = Parameters<typeof createInstrument>[0];

/** Records one partition's result. */
export interface CompactionMetrics {
  /** One examined sealed partition: its result, duration (s), rows written and files deleted. */
  record(result: SluiceCompactionResultValue, durationS: number, rows: number, filesDeleted: number): void;
  /** One corrupt object the compactor quarantined (`sluice.storage.corrupt_objects`, seen by the compactor). */
  corrupt(reason: SluiceStorageCorruptReasonValue): void;
}

/** Instruments on `meter`, or a no-op recorder when there is none. */
export function createCompactionMetrics(meter: CompactorMeter | undefined): CompactionMetrics {
  if (meter === undefined) return { record: () => undefined, corrupt: () => undefined };
  const partitions = createInstrument(meter, METRIC_SLUICE_COMPACTION_PARTITIONS);
  const duration = createInstrument(meter, METRIC_SLUICE_COMPACTION_DURATION);
  const rowsWritten = createInstrument(meter, METRIC_SLUICE_COMPACTION_ROWS);
  const deleted = createInstrument(meter, METRIC_SLUICE_COMPACTION_FILES_DELETED);
  const corruptObjects = createInstrument(meter, METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS);
  return {
    record(result, durationS, rows, filesDeleted) {
      partitions.add(1, { [ATTR_SLUICE_COMPACTION_RESULT]: result });
      duration.record(durationS, { [ATTR_SLUICE_COMPACTION_RESULT]: result });
      if (rows > 0) rowsWritten.add(rows);
      if (filesDeleted > 0) deleted.add(filesDeleted);
    },
    corrupt(reason) {
      corruptObjects.add(1, {
        [ATTR_SLUICE_STORAGE_CORRUPT_REASON]: reason,
        [ATTR_SLUICE_STORAGE_SEEN_BY]: SLUICE_STORAGE_SEEN_BY_VALUE_COMPACTOR,
      });
    },
  };
}
