/**
 * @module test-config
 * A gateway configuration for tests: loopback listeners on port 0, a temp WAL and store, a default tenant,
 * and a short flush age so data becomes visible within seconds.
 */
import type { TestS3Server } from './s3-server.js';

/** The `receiver.sink` keys: each left out when its option is `null` (the shipped default applies). */
function sinkYaml(options: TestConfigOptions): string {
  const age = options.flushAgeSecs === undefined ? 1 : options.flushAgeSecs;
  const interval = options.flushIntervalMs === undefined ? 0 : options.flushIntervalMs;
  const lines = [
    ...(age === null ? [] : [`    flush_age_secs: ${age}\n`]),
    ...(interval === null ? [] : [`    flush_interval_ms: ${interval}\n`]),
  ];
  // An empty section would be YAML null: say so explicitly.
  return lines.length === 0 ? '    {}\n' : lines.join('');
}

function compactionYaml(keys: Readonly<Record<string, number | boolean>> | undefined): string {
  if (keys === undefined) return '';
  return `compaction:\n${Object.entries(keys)
    .map(([k, v]) => `  ${k}: ${String(v)}\n`)
    .join('')}`;
}

/** Options for {@link testConfigYaml}. */
export interface TestConfigOptions {
  readonly walDir: string;
  /** Local store root (ignored when `s3` is given). */
  readonly dataDir?: string;
  readonly s3?: TestS3Server;
  /** `receiver.sink.flush_age_secs` (default 1); `null` leaves it out (the shipped default). */
  readonly flushAgeSecs?: number | null;
  /**
   * `receiver.sink.flush_interval_ms` (default 0 here, so `flushAgeSecs` alone decides when tests flush); `null`
   * leaves it out (the shipped default cadence).
   */
  readonly flushIntervalMs?: number | null;
  /** `compaction.*` keys (snake_case) to set; none by default. */
  readonly compaction?: Readonly<Record<string, number | boolean>>;
  readonly groupCommitMs?: number;
  readonly defaultTenant?: string | null;
  readonly maxRequestBytes?: number;
  readonly maxDecompressedBytes?: number;
  readonly querier?: boolean;
  /** `querier.limits.*` keys (snake_case) to set. */
  readonly querierLimits?: Readonly<Record<string, number | string>>;
  readonly defaultWindowSecs?: number;
  /** Run the receiver role (default true). */
  readonly receiver?: boolean;
  /** `auth.*`: enabled with a tokens file, or with the inline document (a `${env:…}` reference, for instance). */
  readonly auth?: { readonly tokensFile: string } | { readonly tokens: string };
  /** Listener connection caps (`querier.max_connections`, `receiver.max_http_connections`, `…grpc…`). */
  readonly maxConnections?: { readonly query?: number; readonly http?: number; readonly grpc?: number };
  /** `storage.s3.*` call bounds (snake_case keys, e.g. `request_timeout_ms`) to set. */
  readonly s3Bounds?: Readonly<Record<string, number>>;
  /** The S3 endpoint to use instead of the server's own (a proxy in front of it). */
  readonly s3Endpoint?: string;
  /** `server.shutdown_timeout_secs`. */
  readonly shutdownTimeoutSecs?: number;
  /** More `receiver.limits.*` keys (snake_case, e.g. `min_free_disk_percent`) to set. */
  readonly receiverLimits?: Readonly<Record<string, number>>;
  /** More `receiver.wal.*` keys (snake_case, e.g. `max_backlog_bytes`) to set. */
  readonly receiverWal?: Readonly<Record<string, number>>;
}

function authYaml(auth: TestConfigOptions['auth']): string {
  if (auth === undefined) return '';
  const source =
    'tokensFile' in auth ? `  tokens_file: ${JSON.stringify(auth.tokensFile)}` : `  tokens: ${auth.tokens}`;
  return `auth:\n  enabled: true\n${source}\n`;
}

function capYaml(key: string, value: number | undefined): string {
  return value === undefined ? '' : `  ${key}: ${value}\n`;
}

/** `key: value` lines at `indent` for each entry. */
function extraKeysYaml(keys: Readonly<Record<string, number>> | undefined, indent: string): string {
  return Object.entries(keys ?? {})
    .map(([k, v]) => `${indent}${k}: ${v}\n`)
    .join('');
}

function limitsYaml(limits: Readonly<Record<string, number | string>> | undefined): string {
  const entries = Object.entries(limits ?? {});
  if (entries.length === 0) return '';
  return `  limits:\n${entries.map(([k, v]) => `    ${k}: ${v}`).join('\n')}\n`;
}

/** Renders the YAML configuration. */
export function testConfigYaml(options: TestConfigOptions): string {
  const storage = options.s3
    ? `storage:
  backend: s3
  s3:
    bucket: ${options.s3.bucket}
    endpoint: ${options.s3Endpoint ?? options.s3.endpoint}
    region: us-east-1
    prefix: ''
    access_key_id: \${env:SLUICE_TEST_S3_KEY:-${options.s3.accessKeyId}}
    secret_access_key: \${env:SLUICE_TEST_S3_SECRET:-${options.s3.secretAccessKey}}
    force_path_style: true
${Object.entries(options.s3Bounds ?? {})
  .map(([k, v]) => `    ${k}: ${v}\n`)
  .join('')}`
    : `storage:
  backend: local
  local:
    root: ${JSON.stringify(options.dataDir ?? './data')}
`;
  const tenant = options.defaultTenant === undefined ? 'default' : options.defaultTenant;
  const server =
    options.shutdownTimeoutSecs === undefined
      ? ''
      : `server:\n  shutdown_timeout_secs: ${options.shutdownTimeoutSecs}\n`;
  return `${server}${storage}receiver:
  enabled: ${options.receiver ?? true}
  grpc_addr: 127.0.0.1:0
  http_addr: 127.0.0.1:0
  wal_dir: ${JSON.stringify(options.walDir)}
${capYaml('max_http_connections', options.maxConnections?.http)}${capYaml('max_grpc_connections', options.maxConnections?.grpc)}  wal:
    group_commit_ms: ${options.groupCommitMs ?? 20}
${extraKeysYaml(options.receiverWal, '    ')}  sink:
${sinkYaml(options)}  limits:
    max_request_bytes: ${options.maxRequestBytes ?? 4194304}
    max_decompressed_bytes: ${options.maxDecompressedBytes ?? 16777216}
${extraKeysYaml(options.receiverLimits, '    ')}querier:
  enabled: ${options.querier ?? false}
  http_addr: 127.0.0.1:0
${capYaml('max_connections', options.maxConnections?.query)}  default_window_secs: ${options.defaultWindowSecs ?? 3600}
  mcp:
    enabled: true
${limitsYaml(options.querierLimits)}tenancy:
  header: X-Sluice-Tenant
  default_tenant: ${tenant === null ? 'null' : JSON.stringify(tenant)}
${authYaml(options.auth)}${compactionYaml(options.compaction)}telemetry:
  prometheus: true
`;
}
