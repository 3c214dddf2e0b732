/**
 * @module @sluice/storage
 * Layer 2: object stores (local directory, S3), Hive partition keys, UUIDv7 file names, the data/audit Parquet
 * schemas, the writer and the row-group-at-a-time reader over byte ranges.
 */
export type {
  CallOptions,
  ConditionalPutResult,
  ListEntry,
  ListOptions,
  ObjectHead,
  ObjectStore,
  PutCondition,
  PutOptions,
  VersionedObject,
} from './object-store.js';
export {
  InvalidKeyError,
  ObjectNotFoundError,
  TMP_MARKER,
  TruncatedBodyError,
  assertValidKey,
  compareKeys,
} from './object-store.js';
export type { LocalObjectStoreHandle, LocalObjectStoreOptions } from './local-object-store.js';
export { createLocalObjectStore } from './local-object-store.js';
export type { S3ObjectStore, S3ObjectStoreOptions } from './s3-object-store.js';
export { createS3ObjectStore } from './s3-object-store.js';
export type {
  ResiliencePolicy,
  ResilientObjectStore,
  RetryTimers,
  StorageRetryEvent,
} from './resilient-object-store.js';
export { createResilientObjectStore } from './resilient-object-store.js';
export type { DataKeyParts } from './keys.js';
export {
  auditFileKey,
  dataFileKey,
  dataPartitionPrefix,
  decodeTenantFromKey,
  isUuidV7FileName,
  parseDataKey,
  tenantDataPrefix,
} from './keys.js';
export { UUIDV7_RE, uuidv7, uuidv7Timestamp } from './uuidv7.js';
export type { PartitionManifest } from './partition-manifest.js';
export {
  MANIFEST_FILE_NAME,
  MAX_MANIFEST_BYTES,
  ManifestFormatError,
  encodePartitionManifest,
  isManifestFileName,
  manifestKey,
  parsePartitionManifest,
} from './partition-manifest.js';
export {
  CanonicalJsonError,
  anyValueFromJsonObject,
  keyValuesFromJsonArray,
  parseAnyValueJson,
  parseKeyValuesJson,
} from './canonical-json-parse.js';
export type { LogColumnName, SchemaElement } from './parquet-schema.js';
export {
  AUDIT_COLUMN_NAMES,
  AUDIT_EVENT_KIND,
  BODY_KIND,
  LOG_COLUMNS,
  LOG_COLUMN_NAMES,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  auditSchema,
  logSchema,
} from './parquet-schema.js';
export type { LogsParquetOptions, StoredLogRow } from './log-parquet-writer.js';
export {
  DEFAULT_ROW_GROUP_ROWS,
  LogsParquetWriter,
  encodeAuditParquet,
  encodeLogsParquet,
  serviceNameOf,
} from './log-parquet-writer.js';
export type { ColumnarLogsWriter } from './columnar/columnar-logs-writer.js';
export {
  createColumnarLogsWriter,
  encodeLogRowBuffer,
  encodeLogsParquetColumnar,
} from './columnar/columnar-logs-writer.js';
export type { LogRowBuffer } from './columnar/log-row-buffer.js';
export { createLogRowBuffer } from './columnar/log-row-buffer.js';
export type { ByteRangeSource, CountingSource } from './byte-range-source.js';
export { countingSource, sourceFromBytes, sourceFromStore } from './byte-range-source.js';
export type {
  ColumnChunkInfo,
  ColumnValues,
  LeafChunkInfo,
  OpenParquetOptions,
  ParquetFileHandle,
  RowGroupInfo,
} from './parquet-reader.js';
export { estimateDecodedBytes, openParquetFile } from './parquet-reader.js';
export type { FooterCache, FooterCacheOptions, FooterCacheStats } from './footer-cache.js';
export { createFooterCache } from './footer-cache.js';
export { PROVENANCE_KEY, encodeProvenance, provenanceOf, type Provenance } from './compaction-provenance.js';
export { StoredRowError, decodeLogRows } from './decode-log-rows.js';
export { ZSTD_LEVEL, ensureZstd, zstdCompress, zstdDecompress, zstdDecompressView } from './zstd.js';
export type { ObjectStoreHooks, StorageSection, StorageSettings } from './object-store-settings.js';
export { createObjectStore, storageCallPolicy, storageSettingsFrom } from './object-store-settings.js';
export type { CorruptReason, StorageOperation, UnavailableReason } from './storage-errors.js';
export { StorageCorruptError, StorageUnavailableError } from './storage-errors.js';
export type { FilterKind, FilterRange } from './sketch/filter-index.js';
export { FILTERS_KEY } from './sketch/filter-index.js';
export { NGRAM_BYTES, needleNgramHashes } from './sketch/body-ngram-sketch.js';
export { filterRange, groupMayContainText, groupMayContainValue } from './sketch/group-filters.js';
