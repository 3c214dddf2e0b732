/**
 * @module bench-corpus
 * The query-bench corpus builder and query suite, shared by `bench:query`, `bench:governance` and the cgroup soak:
 * `rows` mined records of {@link corpusRecords} (three hours from 2026-03-01T10:00Z) written straight into a
 * local store as Parquet in the receiver's layout, one file per (hour, 250k-row chunk), rows in time order.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { LogRecord } from '@sluice/core';
import { createMiner } from '@sluice/miner';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import { corpusRecords } from '../helpers/query-corpus.js';

const HOUR_NS = 3_600_000_000_000n;
const CHUNK = 250_000;

/** Options for {@link buildQueryCorpus}. */
export interface CorpusOptions {
  readonly rows: number;
  readonly tenant: string;
  /**
   * Text appended to record `i`'s body (default none: the query bench's corpus). The soak uses it to make
   * bodies long, so decoding a row group or grouping by body is really heavy.
   */
  readonly bodySuffix?: (i: number) => string;
  /** Rows per file before the hour split (default 250,000); `bench:footers` uses small files to get many of them. */
  readonly chunkRows?: number;
}

function withSuffix(record: LogRecord, suffix: string): LogRecord {
  return { ...record, body: { kind: 'string', value: (record.body as { value: string }).value + suffix } };
}

/** A request id that occurs in exactly one body of the corpus (the rare-needle query looks for it). */
export const RARE_REQUEST_ID = 'req-5be2f0c94a7d13e8';

/** What {@link buildQueryCorpus} planted: the needle template and a trace id that occurs in the corpus. */
export interface CorpusNeedles {
  /** Template id of the "connection to … timed out" template. */
  readonly needle: bigint;
  /** Hex trace id of one record (about 38 % into the corpus). */
  readonly traceId: string;
}

/**
 * Writes the corpus under `root`. One record (about 62 % into the corpus) has ` request_id=`
 * {@link RARE_REQUEST_ID} appended to its body.
 */
export async function buildQueryCorpus(root: string, options: CorpusOptions): Promise<CorpusNeedles> {
  const store = createLocalObjectStore({ root });
  const miner = createMiner();
  const records = corpusRecords(0, options.rows);
  const rareAt = Math.floor(options.rows * 0.617);
  let traceAt = Math.floor(options.rows * 0.383);
  while (traceAt < records.length - 1 && records[traceAt]!.traceId.length !== 16) traceAt++;
  const traceId = Buffer.from(records[traceAt]?.traceId ?? []).toString('hex');
  let needle = 0n;
  const chunkRows = options.chunkRows ?? CHUNK;
  for (let start = 0; start < records.length; start += chunkRows) {
    const chunk = records.slice(start, start + chunkRows);
    const byHour = new Map<bigint, StoredLogRow[]>();
    for (let k = 0; k < chunk.length; k++) {
      const i = start + k;
      const suffix = (options.bodySuffix?.(i) ?? '') + (i === rareAt ? ` request_id=${RARE_REQUEST_ID}` : '');
      const record = suffix === '' ? chunk[k]! : withSuffix(chunk[k]!, suffix);
      const mined = miner.mine(options.tenant, record);
      if (needle === 0n && (record.body as { value: string }).value.startsWith('connection to'))
        needle = mined.templateId;
      const hour = record.timeUnixNano / HOUR_NS;
      const list = byHour.get(hour) ?? [];
      list.push({ tenantId: options.tenant, record, mined });
      byHour.set(hour, list);
    }
    for (const rows of byHour.values()) {
      await store.put(
        dataFileKey(options.tenant, rows[0]!.record.timeUnixNano, uuidv7()),
        await encodeLogsParquet(rows),
      );
    }
  }
  return { needle, traceId };
}

/** The corpus's whole window, as a DSL range. */
export const CORPUS_WINDOW = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';

/** One query of the suite, in Sluice DSL and DuckDB SQL over view `t`. */
export interface SuiteQuery {
  readonly name: string;
  readonly sluice: string;
  readonly duck: string;
  /**
   * The fair twin of `duck` where DuckDB would do less work than Sluice: a `limit` query in Sluice also reports
   * `rows`, the full match count, so the twin counts every match as well.
   */
  readonly duckFair?: string;
}

/** `select` limited to `limit` rows, plus the count of every row it would return without the limit. */
function withMatchCount(where: string, limit: number): string {
  return `WITH m AS (SELECT * FROM t${where}) SELECT (SELECT count(*) FROM m) AS match_count, * FROM m LIMIT ${limit}`;
}

/** The query bench's six queries. */
export function querySuite(needle: bigint): SuiteQuery[] {
  const W = CORPUS_WINDOW;
  const NEEDLE_W = 'range(2026-03-01T11:00:00Z, 2026-03-01T11:30:00Z)';
  return [
    {
      name: 'count by template_id',
      sluice: `true | ${W} | count by template_id`,
      duck: 'SELECT template_id, count(*) FROM t GROUP BY 1',
    },
    {
      name: 'count by service, bucket(5m)',
      sluice: `true | ${W} | count by service, bucket(5m)`,
      duck: `SELECT "resource.service.name", epoch_ns(effective_time_unix_nano) // 300000000000 AS b, count(*) FROM t GROUP BY 1, 2`,
    },
    {
      name: 'substring search, limit 100',
      sluice: `contains(body, "timed out") | ${W} | limit 100`,
      duck: `SELECT * FROM t WHERE body LIKE '%timed out%' LIMIT 100`,
      duckFair: withMatchCount(" WHERE body LIKE '%timed out%'", 100),
    },
    {
      name: 'full-scan substring count',
      sluice: `contains(body, "timed out") | ${W} | count`,
      duck: `SELECT count(*) FROM t WHERE body LIKE '%timed out%'`,
    },
    {
      name: 'windowed template needle',
      sluice: `template_id == ${needle} | ${NEEDLE_W} | limit 100`,
      duck: `SELECT * FROM t WHERE template_id = ${needle} AND effective_time_unix_nano >= '2026-03-01 11:00:00' AND effective_time_unix_nano < '2026-03-01 11:30:00' LIMIT 100`,
      duckFair: withMatchCount(
        ` WHERE template_id = ${needle} AND effective_time_unix_nano >= '2026-03-01 11:00:00' AND effective_time_unix_nano < '2026-03-01 11:30:00'`,
        100,
      ),
    },
    {
      name: '10k-row materialization',
      sluice: `true | ${W} | limit 10000`,
      duck: 'SELECT * FROM t LIMIT 10000',
      duckFair: withMatchCount('', 10000),
    },
  ];
}

/**
 * Needle queries beyond the original six: a request id that occurs once in the corpus, and one trace id. Both
 * are answered by the row-group filters (docs/design/storage-format.md, "Row-group filters").
 */
export function needleSuite(traceId: string): SuiteQuery[] {
  const W = CORPUS_WINDOW;
  return [
    {
      name: 'rare needle (one request id)',
      sluice: `contains(body, "${RARE_REQUEST_ID}") | ${W} | limit 100`,
      duck: `SELECT * FROM t WHERE body LIKE '%${RARE_REQUEST_ID}%' LIMIT 100`,
      duckFair: withMatchCount(` WHERE body LIKE '%${RARE_REQUEST_ID}%'`, 100),
    },
    {
      name: 'trace_id needle',
      sluice: `trace_id == "${traceId}" | ${W} | limit 100`,
      duck: `SELECT * FROM t WHERE trace_id = from_hex('${traceId}') LIMIT 100`,
      duckFair: withMatchCount(` WHERE trace_id = from_hex('${traceId}')`, 100),
    },
  ];
}

/** The median (upper median for an even count). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function statusKb(pid: number, key: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

/** Peak resident set of `pid` in KiB (`VmHWM`). */
export function vmHwmKb(pid: number): number {
  return statusKb(pid, 'VmHWM');
}

/** Current resident set of `pid` in KiB (`VmRSS`). */
export function vmRssKb(pid: number): number {
  return statusKb(pid, 'VmRSS');
}

/**
 * CPU time of every thread of `pid` so far, in ms (`/proc/<pid>/task/<tid>/schedstat`, nanoseconds on a CPU): what
 * a query cost in work, which a noisy machine disturbs far less than its wall time. A thread that ends between the
 * two readings drops out of the second one, so the figure is for a process whose threads stay (the query workers).
 */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended while we looked
    }
  }
  return ns / 1e6;
}
