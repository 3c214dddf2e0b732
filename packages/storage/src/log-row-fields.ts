/**
 * @module log-row-fields
 * What both data-file encoders (hyparquet-writer and columnar) share about a stored row: the row-group size and
 * the promoted `resource.service.name` value (docs/design/storage-format.md).
 */
import type { LogRecord } from '@sluice/core';

/** Rows per row group (docs/design/storage-format.md). */
export const DEFAULT_ROW_GROUP_ROWS = 65_536;

/** The `resource.service.name` promoted value: the string value of the `service.name` resource attribute. */
export function serviceNameOf(record: LogRecord): string | null {
  for (const kv of record.resource.attributes) {
    if (kv.key === 'service.name') return kv.value.kind === 'string' ? kv.value.value : null;
  }
  return null;
}
