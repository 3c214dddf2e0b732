/**
 * @module @sluice/config
 * Layer 1: Sluice's configuration. A YAML file with `${env:…}` substitution, or env-only mode (`SLUICE_*`);
 * one strict schema; every problem reported at once. Only `loadConfig` does I/O.
 */
export type { ConfigIssue, FormatConfigIssuesOptions } from './config-issue.js';
export { formatConfigIssues } from './config-issue.js';
export type { ParseConfigInput } from './parse-config.js';
export { parseConfig } from './parse-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { loadConfig } from './load-config.js';
export type { EnvSource } from './env-substitution.js';
export type {
  SluiceConfig,
  StorageBackend,
  CorruptObjectPolicy,
  CeilingEnforcement,
  ServerConfig,
  StorageConfig,
  LocalStorageConfig,
  S3StorageConfig,
  ReceiverConfig,
  WalConfig,
  SinkConfig,
  ReceiverLimitsConfig,
  MinerConfig,
  QuerierConfig,
  McpConfig,
  ConsoleUiConfig,
  LokiConfig,
  QueryLimitsConfig,
  CompactionConfig,
  TenancyConfig,
  AuthConfig,
  TelemetryConfig,
} from './sluice-config.js';
export type { ConfigKeyInfo } from './config-keys.js';
export { configKeyPaths, configKeyReference, envVarName, ENV_PREFIX } from './config-keys.js';
export { renderKeyTable } from './key-table.js';
export { isNonConfigEnvVar, NON_CONFIG_ENV_NAMES, NON_CONFIG_ENV_PREFIXES } from './env-source.js';
export { CONFIG_VERSION, MIN_MEMORY_POOL_BYTES } from './config-schema.js';
export type { HostPort } from './host-port.js';
export { splitHostPort } from './host-port.js';
