/**
 * @module config-schema
 * The one strict schema of a Sluice configuration (docs/configuration.md), in the file's snake_case key names. These key
 * names are a public contract: operators, the Helm chart and tests use them, and env-only mode derives its
 * variable names from them. Add keys freely; never rename one.
 *
 * Every leaf has a default, so an empty file is a complete configuration. Cross-field rules (docs/design/query-governance.md,
 * roles, S3 bucket) run even when other keys are invalid, so one pass reports every problem.
 */
import type { z } from 'zod';
import { describeTenantError, parseTenant } from '@sluice/core';
import type { Result } from '@sluice/core';
import { splitHostPort } from './host-port.js';
import { leaf, section } from './schema-builders.js';
import type { SectionRule } from './schema-builders.js';
import {
  coerceBoolean,
  coerceChoice,
  coerceDecimal,
  coerceInteger,
  coerceString,
  describeBounds,
} from './scalar-value.js';
import type { NumberBounds } from './scalar-value.js';
import type { CeilingEnforcement, CorruptObjectPolicy, StorageBackend } from './sluice-config.js';

/** The only configuration major version this build reads. */
export const CONFIG_VERSION = 1;

/** Smallest explicit `querier.limits.memory_pool_bytes`: 32 MiB (below it a pool refuses nearly every query). */
export const MIN_MEMORY_POOL_BYTES = 32 * 1024 * 1024;

/** The storage backends. */
export const STORAGE_BACKENDS: readonly StorageBackend[] = ['local', 's3'];

/** What a query does with a corrupt object (`querier.on_corrupt_object`). */
export const CORRUPT_OBJECT_POLICIES: readonly CorruptObjectPolicy[] = ['fail', 'skip'];

/** What the per-query result ceilings do (`querier.limits.enforcement`). */
export const CEILING_ENFORCEMENTS: readonly CeilingEnforcement[] = ['enforce', 'observe'];

const AT_LEAST_ONE: NumberBounds = { min: 1 };

function integerKey(description: string, defaultValue: number, bounds: NumberBounds = AT_LEAST_ONE) {
  return leaf({ description, constraint: `integer ${describeBounds(bounds)}` }, defaultValue, (raw) =>
    coerceInteger(raw, bounds),
  );
}

function optionalIntegerKey(description: string, bounds: NumberBounds, why: string) {
  return leaf<number | null>(
    { description, constraint: `integer ${describeBounds(bounds)}, or unset` },
    null,
    (raw) => {
      const r = coerceInteger(raw, bounds);
      return r.ok ? r : { ok: false, error: `${r.error} (${why})` };
    },
  );
}

/** How an HTTP listener refuses a connection past its cap. */
const HTTP_REFUSAL =
  'are answered 503 with Retry-After: 1 and closed (while many are already being refused, closed at accept)';

/** `refusal`: what a client past the cap sees, completing "past it new connections …". */
function connectionsKey(listener: string, refusal: string) {
  return optionalIntegerKey(
    `Open client connections of the ${listener} listener at once; past it new connections ${refusal}. Unset = derived from the open-file limit (ulimit -n): what remains after 256 reserved handles, shared by the listeners without an explicit cap, at most 4096 each.`,
    AT_LEAST_ONE,
    'a listener needs at least one connection',
  );
}

function decimalKey(description: string, defaultValue: number, bounds: NumberBounds) {
  return leaf({ description, constraint: `number ${describeBounds(bounds)}` }, defaultValue, (raw) =>
    coerceDecimal(raw, bounds),
  );
}

function optionalDecimalKey(description: string, bounds: NumberBounds) {
  return leaf<number | null>({ description, constraint: `number ${describeBounds(bounds)}, or unset` }, null, (raw) =>
    coerceDecimal(raw, bounds),
  );
}

function booleanKey(description: string, defaultValue: boolean) {
  return leaf({ description, constraint: 'true | false' }, defaultValue, coerceBoolean);
}

type Check = (text: string) => string | undefined;

function checked(raw: unknown, check: Check | undefined): Result<string, string> {
  const r = coerceString(raw);
  if (!r.ok || check === undefined) return r;
  const problem = check(r.value);
  return problem === undefined ? r : { ok: false, error: problem };
}

function stringKey(description: string, defaultValue: string, constraint = 'string', check?: Check) {
  return leaf({ description, constraint }, defaultValue, (raw) => checked(raw, check));
}

function optionalStringKey(
  description: string,
  options: { readonly constraint?: string; readonly check?: Check; readonly secret?: boolean } = {},
) {
  return leaf<string | null>(
    { description, constraint: options.constraint ?? 'string, or unset', secret: options.secret ?? false },
    null,
    (raw) => checked(raw, options.check),
  );
}

function addressKey(description: string, defaultValue: string) {
  return stringKey(description, defaultValue, 'host:port (port 0 = any free port)', (text) => {
    const r = splitHostPort(text);
    return r.ok ? undefined : r.error;
  });
}

const checkHttpUrl: Check = (text) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be an http:// or https:// URL, got ${JSON.stringify(text)}`;
  }
  return url.protocol === 'http:' || url.protocol === 'https:'
    ? undefined
    : `must be an http:// or https:// URL, got ${JSON.stringify(text)}`;
};

// RFC 9110 token characters: what an HTTP field name may contain.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const checkTenant: Check = (text) => {
  const r = parseTenant(text);
  return r.ok ? undefined : `${describeTenantError(r.error)}, got ${JSON.stringify(text)}`;
};

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function sub(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null ? (value as Readonly<Record<string, unknown>>) : {};
}

const versionKey = leaf<typeof CONFIG_VERSION>(
  {
    description: `Configuration format major version; only ${CONFIG_VERSION} exists (a newer minor, e.g. 1.2, is accepted).`,
    constraint: `${CONFIG_VERSION}`,
  },
  CONFIG_VERSION,
  (raw) => {
    const text = typeof raw === 'number' || typeof raw === 'string' ? String(raw).trim() : '';
    const m = /^(\d+)(?:\.\d+)?$/.exec(text);
    if (m === null) return { ok: false, error: `must be a version number such as ${CONFIG_VERSION}` };
    if (Number(m[1]) !== CONFIG_VERSION) {
      return {
        ok: false,
        error: `unsupported configuration version ${text}: this Sluice reads version ${CONFIG_VERSION}`,
      };
    }
    return { ok: true, value: CONFIG_VERSION };
  },
);

/** The longest a Node.js timer can wait, ms: a longer timeout would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

const storageSchema = section({
  backend: leaf<StorageBackend>(
    { description: 'Where Parquet files, manifests and audit records are stored.', constraint: 'local | s3' },
    'local',
    (raw) => coerceChoice(raw, STORAGE_BACKENDS),
  ),
  local: section({
    root: stringKey('Directory of the local object store (backend local).', './data', 'path'),
    request_timeout_ms: integerKey(
      'Longest one local-store call may take, in ms (a hung NFS-like mount); past it the call fails storage_unavailable. Not retried. 0 = no bound.',
      30000,
      { min: 0, max: MAX_TIMER_MS },
    ),
  }),
  s3: section({
    bucket: optionalStringKey('S3 bucket; required when storage.backend is s3.'),
    endpoint: optionalStringKey('S3 endpoint URL for S3-compatible servers; unset = AWS for the region.', {
      constraint: 'http(s) URL, or unset',
      check: checkHttpUrl,
    }),
    region: stringKey('S3 region.', 'us-east-1'),
    prefix: stringKey('Key prefix inside the bucket; empty = the bucket root.', ''),
    access_key_id: optionalStringKey(
      'S3 access key id; give it as ${env:NAME}. Unset = the AWS SDK default credential chain.',
      { secret: true },
    ),
    secret_access_key: optionalStringKey(
      'S3 secret access key; give it as ${env:NAME}. Unset = the AWS SDK default credential chain.',
      { secret: true },
    ),
    force_path_style: booleanKey('Path-style bucket addressing (needed by most S3-compatible servers).', true),
    connect_timeout_ms: integerKey('Longest wait for a connection to the S3 endpoint, in ms.', 3000, {
      min: 1,
      max: MAX_TIMER_MS,
    }),
    request_timeout_ms: integerKey(
      'Longest one S3 request attempt may take, in ms, from sending to the last byte of the answer (a large PUT on a slow link needs more).',
      10000,
      { min: 1, max: MAX_TIMER_MS },
    ),
    max_attempts: integerKey(
      'Attempts of one S3 call on a timeout, a reset connection, a truncated body or a 5xx/429 answer, before it fails storage_unavailable.',
      3,
      { min: 1, max: 10 },
    ),
    retry_base_ms: integerKey(
      'Back-off before the second attempt, in ms; it doubles per attempt up to retry_max_ms, with full jitter.',
      100,
      { min: 1, max: MAX_TIMER_MS },
    ),
    retry_max_ms: integerKey('Longest back-off between two attempts, in ms.', 2000, { min: 1, max: MAX_TIMER_MS }),
  }),
});

const minerSchema = section({
  similarity_threshold: decimalKey('Template similarity at or above which a line attaches to a template.', 0.7, {
    minExclusive: 0,
    max: 1,
  }),
  prefix_depth: integerKey('Prefix-tree levels of leading tokens (Drain depth).', 2, { min: 0, max: 8 }),
  max_node_children: integerKey('Children per tree node before unseen tokens route through a wildcard.', 100),
  param_byte_limit: integerKey('Bytes of one parameter value before it is stored as OVERFLOW.', 256, {
    min: 1,
    max: 1024,
  }),
  max_templates_per_tenant: integerKey('Templates per tenant; beyond it new shapes are stored unmined.', 20000),
  max_line_tokens: integerKey('Tokens per line; longer lines are stored unmined.', 512),
});

const receiverSchema = section({
  enabled: booleanKey('Run the receiver role (OTLP ingest).', true),
  grpc_addr: addressKey('OTLP/gRPC listen address.', '0.0.0.0:4317'),
  http_addr: addressKey('OTLP/HTTP listen address (also serves /healthz, /readyz, /metrics).', '0.0.0.0:4318'),
  max_http_connections: connectionsKey('OTLP/HTTP', HTTP_REFUSAL),
  max_grpc_connections: connectionsKey(
    'OTLP/gRPC',
    'are closed at accept (the client sees UNAVAILABLE, which OTLP exporters retry)',
  ),
  wal_dir: stringKey('Directory of the write-ahead log.', './wal', 'path'),
  wal: section({
    group_commit_ms: integerKey('Group-commit window: longest wait before an fsync of appended exports, in ms.', 100),
    segment_bytes: integerKey('WAL segment size in bytes before rotation.', 134217728),
    max_backlog_bytes: integerKey(
      'WAL bytes not yet in object storage above which ingest answers 503 (backpressure).',
      4294967296,
    ),
    fence_retry_ms: integerKey(
      'After a failed WAL write or fsync: least time exports are refused before the WAL resumes, and the interval between attempts to cut it back to its last acknowledged export, in ms.',
      1000,
    ),
  }),
  sink: section({
    flush_age_secs: integerKey('Oldest buffered record age that forces a Parquet flush, in seconds.', 300),
    flush_interval_ms: integerKey(
      'Freshness cadence: flush once the oldest buffered record has waited this long, in ms, so an acknowledged record is queryable about this much later (docs/design/freshness.md). 0 = off (flush_age_secs, flush_bytes and ceiling_bytes only).',
      1000,
      { min: 0, max: MAX_TIMER_MS },
    ),
    flush_bytes: integerKey('Buffered bytes of one partition that force a flush.', 134217728),
    ceiling_bytes: optionalIntegerKey(
      'Total sink buffer bytes that force flushing the largest partitions; unset = derived from min(cgroup limit, RAM): 0.25 of it with the querier in the process (never more than the limit less the query pool and the 320 MiB baseline), else 0.5 (less the baseline), clamped to [32 MiB, 1 GiB].',
      AT_LEAST_ONE,
      'a ceiling of 0 would flush on every record',
    ),
  }),
  limits: section({
    max_request_bytes: integerKey('Largest request body as sent (compressed), in bytes; larger is 413.', 4194304),
    max_decompressed_bytes: integerKey('Largest request body after decompression, in bytes; larger is 413.', 16777216),
    max_inflight_bytes: integerKey(
      'Decompressed export bytes waiting for their WAL fsync at once; beyond it ingest answers 503 + Retry-After.',
      268435456,
    ),
    min_free_disk_percent: decimalKey(
      'Free space on the WAL volume, in percent of its size, below which /readyz answers 503 and exports are refused with 503 + Retry-After (disk_low) before they are written; 0 disables the guard.',
      10,
      { min: 0, max: 99 },
    ),
  }),
  miner: minerSchema,
});

const querierLimitsRule: SectionRule = (value, report) => {
  const defaultRows = num(value['default_rows']);
  const maxRows = num(value['max_rows']);
  if (defaultRows !== undefined && maxRows !== undefined && defaultRows > maxRows) {
    report(['default_rows'], `must be <= max_rows (${maxRows}), got ${defaultRows}`);
  }
};

const querierSchema = section({
  enabled: booleanKey('Run the querier role (/v1/query and MCP).', true),
  http_addr: addressKey('Query HTTP listen address (/v1/query, /mcp, /healthz, /readyz, /metrics).', '0.0.0.0:4319'),
  max_connections: connectionsKey('query HTTP (/v1/query, /mcp)', HTTP_REFUSAL),
  default_window_secs: integerKey('Time window of a query that names none, in seconds.', 3600),
  on_corrupt_object: leaf<CorruptObjectPolicy>(
    {
      description:
        'A query meeting a corrupt or foreign object (manifest, Parquet file): fail = answer storage_corrupt naming the key; skip = serve the rest and count it in stats.objects_skipped.',
      constraint: 'fail | skip',
    },
    'fail',
    (raw) => coerceChoice(raw, CORRUPT_OBJECT_POLICIES),
  ),
  mcp: section({
    enabled: booleanKey('Serve MCP at /mcp on the query listener.', true),
  }),
  ui: section({
    enabled: booleanKey(
      'Serve the web console at / on the query listener (static files; it calls /v1/query, /v1/tail, /mcp and /v1/status). false = / answers 404.',
      true,
    ),
  }),
  loki: section({
    enabled: booleanKey(
      'Serve the Loki-compatible read API (/loki/api/v1/...) on the query listener, for Grafana (docs/grafana.md).',
      true,
    ),
    tenant_header: stringKey(
      "Loki's tenant header, accepted on /loki/api/v1/... besides tenancy.header (both with different values: 400).",
      'X-Scope-OrgID',
      'HTTP header name',
      (text) => (HEADER_NAME.test(text) ? undefined : `must be an HTTP header name, got ${JSON.stringify(text)}`),
    ),
    sample_rows: integerKey(
      'Newest records read to list label names, series, detected labels and detected fields (clamped to limits.max_rows).',
      1000,
    ),
  }),
  limits: section(
    {
      memory_pool_bytes: optionalIntegerKey(
        'Query memory pool in bytes; unset = memory_pool_fraction x min(cgroup limit, RAM).',
        { min: MIN_MEMORY_POOL_BYTES },
        'a smaller pool would refuse nearly every query',
      ),
      memory_pool_fraction: optionalDecimalKey(
        'Share of min(cgroup limit, RAM) for the pool when memory_pool_bytes is unset; unset = 0.5 with another role in the process, else 0.75.',
        { minExclusive: 0, max: 1 },
      ),
      max_concurrent_queries: integerKey('Queries executing at once (query worker count).', 4),
      query_parallelism: optionalIntegerKey(
        'Workers one large aggregation (count, min, max) may scan with while no other query is running or queued: its own query worker plus query_parallelism - 1 scan helpers, started beside the query workers, that never hold an admission permit. Unset = 1: every query scans on its own worker (on a 2-core machine a helper measured no faster: one scan already keeps more than one core busy).',
        AT_LEAST_ONE,
        'a query scans on at least its own worker',
      ),
      max_queued_queries: integerKey('Queries waiting for a slot; 0 = refuse at once when all slots are busy.', 16, {
        min: 0,
      }),
      queue_timeout_ms: integerKey('Longest wait in the queue before query_queue_timeout, in ms.', 10000),
      query_timeout_ms: integerKey(
        'Longest execution of an admitted query, in ms (queue wait not included); past it the query is stopped and answered query_time_limit or query_time_contended. A request may ask for less (timeout_ms, X-Sluice-Query-Timeout-Ms), never more. 0 = no deadline (not recommended).',
        30000,
        { min: 0, max: MAX_TIMER_MS },
      ),
      max_concurrent_queries_per_tenant: optionalIntegerKey(
        "One tenant's queries running plus queued at once; past it the tenant's next query is refused query_tenant_busy before it takes a queue slot. Unset = half of max_concurrent_queries + max_queued_queries, rounded up.",
        AT_LEAST_ONE,
        'a tenant needs at least one query',
      ),
      light_query_permits: integerKey(
        'Permits (and query workers) of max_concurrent_queries reserved for light queries: those whose last run was fast and small (light_query_ms, light_query_memory_bytes), with their own queue. Heavy queries cannot take them. At most max_concurrent_queries - 1 take effect; 0 = one lane for every query.',
        2,
        { min: 0 },
      ),
      light_query_ms: integerKey(
        'A query is light when its last run executed in less than this many ms (and within light_query_memory_bytes, without a refusal). A light-lane run still executing after it is moved to the general lane.',
        4000,
        { min: 1, max: MAX_TIMER_MS },
      ),
      light_query_memory_bytes: optionalIntegerKey(
        'A query is light when its last run held at most this many pool bytes. The general lane leaves light_query_permits x this much of the pool free for the light lane (at most half the pool). Unset = the pool / 16.',
        AT_LEAST_ONE,
        'a light query needs some memory',
      ),
      max_query_memory_bytes: optionalIntegerKey(
        'Query memory one query may hold, in bytes; past it the query is refused query_memory_limit (422). Unset = half the pool or 1.25 x pool / max_concurrent_queries (what a query worker heap is sized for), the smaller. Larger than the pool = the pool.',
        AT_LEAST_ONE,
        'a query needs some memory',
      ),
      max_live_tails: integerKey(
        'Live tails (POST /v1/tail) open at once across all tenants; past it a new tail is refused query_tail_limit (503).',
        10,
      ),
      max_tail_secs: integerKey(
        'Longest life of one live tail, in seconds; it then ends with a final {"end":"max_tail_secs"} line.',
        3600,
      ),
      max_tail_buffer_bytes: integerKey(
        'Bytes of NDJSON lines one live tail may hold for a client that reads slower than records arrive (reserved on the query memory pool); past it the tail ends with a final {"dropped":n} line.',
        1048576,
        { min: 4096 },
      ),
      tail_poll_ms: integerKey(
        'Milliseconds between two polls of the store by a live tail (each poll is one short admitted query).',
        1000,
        { min: 50, max: MAX_TIMER_MS },
      ),
      max_listed_objects: integerKey('Objects a query may list while resolving its files.', 100000),
      max_files: integerKey('Data files a query may read.', 10000),
      default_rows: integerKey('Rows returned when a query sets no limit; must be <= max_rows.', 1000),
      max_rows: integerKey('Largest row limit a query may ask for.', 10000),
      max_result_bytes: integerKey('Largest serialized result body, in bytes.', 67108864),
      footer_cache_bytes: integerKey(
        'Parsed Parquet footers each query worker keeps across queries, in bytes, reserved on the query pool (consumer footer-cache-<thread>). Capped per worker at the pool / (8 x max_concurrent_queries); cleared before a query would be refused for memory. 0 = off.',
        33554432,
        { min: 0 },
      ),
      max_open_files: integerKey(
        'Local data files each query worker keeps open between range reads (local backend; data files are immutable). 0 = open and close the file on every read.',
        256,
        { min: 0 },
      ),
      enforcement: leaf<CeilingEnforcement>(
        {
          description:
            'What the per-query result ceilings do: enforce = refuse past max_result_bytes or max_query_memory_bytes (422) and clamp a limit to max_rows; observe = serve the query, log a warning with its fingerprint and the figure, and count sluice.query.budget_exceeded. The pool, file, time and admission limits are enforced either way.',
          constraint: 'enforce | observe',
        },
        'enforce',
        (raw) => coerceChoice(raw, CEILING_ENFORCEMENTS),
      ),
    },
    querierLimitsRule,
  ),
});

const compactionSchema = section({
  enabled: booleanKey('Run the compaction role.', true),
  interval_secs: integerKey('Seconds between compaction passes.', 300),
  grace_secs: integerKey('Age in seconds a partition must reach before it is compacted.', 900),
  open_hour_min_file_age_secs: integerKey(
    'Continuous compaction of hours still open (docs/design/freshness.md): sink files at least this old, by their UUIDv7 name, are merged each pass so files per partition stay bounded; younger ones are left for live tails to read first. 0 = off (only sealed hours are compacted).',
    10,
    { min: 0, max: 3600 },
  ),
  memory_budget_bytes: integerKey(
    'Decoded row bytes a partition merge may hold at once (footer estimate); wider rows are merged in smaller slices and row groups.',
    67108864,
    { min: 16 * 1024 * 1024 },
  ),
});

const tenancySchema = section({
  header: stringKey(
    'HTTP header (gRPC metadata key, lowercased) that names the tenant.',
    'X-Sluice-Tenant',
    'HTTP header name',
    (text) => (HEADER_NAME.test(text) ? undefined : `must be an HTTP header name, got ${JSON.stringify(text)}`),
  ),
  default_tenant: optionalStringKey('Tenant of exports without the header; unset = the header is required (400).', {
    constraint: "tenant: 1-128 visible ASCII characters except ':', '#', '/'; or unset",
    check: checkTenant,
  }),
});

const authRule: SectionRule = (value, report) => {
  const file = value['tokens_file'];
  const inline = value['tokens'];
  const fileSet = typeof file === 'string';
  const inlineSet = typeof inline === 'string';
  if (value['enabled'] === true) {
    if (fileSet && inlineSet) report(['tokens'], 'set either auth.tokens_file or auth.tokens, not both');
    else if (!fileSet && !inlineSet && file !== undefined && inline !== undefined) {
      report(['enabled'], 'auth is enabled but no token is configured: set auth.tokens_file (or auth.tokens)');
    }
  } else if (value['enabled'] === false) {
    // A token list with auth off would run the gateway open while its operator believes it is protected.
    if (fileSet) report(['tokens_file'], 'is set but auth.enabled is false: set auth.enabled: true, or unset it');
    if (inlineSet) report(['tokens'], 'is set but auth.enabled is false: set auth.enabled: true, or unset it');
  }
};

const authSchema = section(
  {
    enabled: booleanKey(
      'Require a bearer token (Authorization: Bearer) on ingest, /v1/query, /mcp and /metrics; /healthz and /readyz stay open.',
      false,
    ),
    tokens_file: optionalStringKey(
      'YAML or JSON file listing the accepted tokens as SHA-256 hashes with their tenants and surfaces (docs/security.md).',
      { constraint: 'path, or unset' },
    ),
    tokens: optionalStringKey(
      'The same token document inline (JSON), for env-only mode; use either this or tokens_file.',
      { constraint: 'token document (JSON or YAML text), or unset' },
    ),
    protect_metrics: booleanKey(
      'With auth enabled, /metrics needs a token with the admin surface; false serves it without a token.',
      true,
    ),
  },
  authRule,
);

const telemetrySchema = section({
  otlp_endpoint: optionalStringKey("OTLP/HTTP endpoint Sluice pushes its own metrics to; unset = don't push.", {
    constraint: 'http(s) URL, or unset',
    check: checkHttpUrl,
  }),
  prometheus: booleanKey('Serve Prometheus text at /metrics on every HTTP listener.', true),
  service_name: stringKey("service.name of Sluice's own telemetry.", 'sluice'),
});

const rootRule: SectionRule = (value, report) => {
  const storage = sub(value['storage']);
  if (storage['backend'] === 's3' && sub(storage['s3'])['bucket'] === null) {
    report(['storage', 's3', 'bucket'], 'is required when storage.backend is s3');
  }
  const roles = ['receiver', 'querier', 'compaction'] as const;
  const enabled = roles.map((r) => sub(value[r])['enabled']);
  if (enabled.every((e) => e === false)) {
    report([], 'no role is enabled: set at least one of receiver.enabled, querier.enabled, compaction.enabled to true');
  }
};

const serverSchema = section({
  shutdown_timeout_secs: integerKey(
    'Longest graceful stop after SIGTERM/SIGINT, in seconds; storage work still running then is abandoned (its records stay in the WAL) and the process exits.',
    30,
    { min: 1, max: 3600 },
  ),
});

/** The configuration schema (snake_case input and output); an issue's path is its key path. */
export const configSchema = section(
  {
    version: versionKey,
    server: serverSchema,
    storage: storageSchema,
    receiver: receiverSchema,
    querier: querierSchema,
    compaction: compactionSchema,
    tenancy: tenancySchema,
    auth: authSchema,
    telemetry: telemetrySchema,
  },
  rootRule,
);

/** The schema's validated output: snake_case, fully defaulted. Converted to {@link SluiceConfig} afterwards. */
export type RawConfig = z.output<typeof configSchema>;
