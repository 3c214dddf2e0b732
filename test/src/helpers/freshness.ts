/**
 * @module freshness
 * The freshness probe shared by the e2e test and `npm run bench:freshness` (docs/design/freshness.md): the two
 * deployment shapes with the shipped flush settings, one marked record per export, and polling `/v1/query` until
 * the marker is returned.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { post } from './http-client.js';
import { postQuery } from './query-client.js';
import { spawnSluice, type SluiceProcess } from './spawn-sluice.js';
import { testConfigYaml } from './test-config.js';

/** One process with every role, or a receiver (with the compactor) and a querier as two processes on one store. */
export type Shape = 'single' | 'split';

/** A running deployment. */
export interface Deployment {
  readonly otlpUrl: string;
  readonly queryUrl: string;
  readonly processes: readonly SluiceProcess[];
  stop(): Promise<void>;
}

/** The tenant the probe uses. */
export const FRESH_TENANT = 'fresh';

/**
 * Starts `shape` over `dir/data` with the shipped `receiver.sink` settings (no flush key set). `compaction` keys
 * go to the process that runs the compactor (`'shipped'`: no compaction key set).
 */
export async function startDeployment(
  shape: Shape,
  dir: string,
  keys: Readonly<Record<string, number | boolean>> | 'shipped' = { enabled: false },
): Promise<Deployment> {
  const compaction = keys === 'shipped' ? undefined : keys;
  const common = {
    dataDir: join(dir, 'data'),
    flushAgeSecs: null,
    flushIntervalMs: null,
    defaultTenant: FRESH_TENANT,
  } as const;
  mkdirSync(dir, { recursive: true });
  const processes: SluiceProcess[] = [];
  try {
    if (shape === 'single') {
      const p = await spawnSluice(
        testConfigYaml({ ...common, walDir: join(dir, 'wal'), querier: true, ...(compaction ? { compaction } : {}) }),
        { dir },
      );
      processes.push(p);
    } else {
      processes.push(
        await spawnSluice(
          testConfigYaml({
            ...common,
            walDir: join(dir, 'wal'),
            querier: false,
            ...(compaction ? { compaction } : {}),
          }),
          { dir },
        ),
      );
      processes.push(
        await spawnSluice(
          testConfigYaml({
            ...common,
            walDir: join(dir, 'wal-querier'),
            receiver: false,
            querier: true,
            compaction: { enabled: false },
          }),
          { dir },
        ),
      );
    }
    for (const p of processes) await p.waitReady();
  } catch (e) {
    await Promise.all(processes.map((p) => p.kill()));
    throw e;
  }
  const otlp = processes[0]!;
  const querier = processes.find((p) => p.queryUrl !== null)!;
  return {
    otlpUrl: otlp.otlpHttpUrl,
    queryUrl: querier.queryUrl!,
    processes,
    async stop() {
      for (const p of processes) await p.stop();
    },
  };
}

/** A marker no other marker contains: `fresh-<run>-<zero-padded n>-end`. */
export function marker(run: string, n: number): string {
  return `fresh-${run}-${String(n).padStart(6, '0')}-end`;
}

/**
 * Exports one record whose body carries `mark` (OTLP/JSON, the way a new user's first export looks), timed at
 * `timeMs` (default now). Resolves with `performance.now()` at the 200.
 * @throws when the export is not acknowledged.
 */
export async function exportMarked(otlpUrl: string, mark: string, timeMs: number = Date.now()): Promise<number> {
  const body = JSON.stringify({
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'freshness' } }] },
        scopeLogs: [
          {
            scope: { name: 'freshness-probe' },
            logRecords: [
              {
                timeUnixNano: `${BigInt(Math.floor(timeMs)) * 1_000_000n}`,
                severityNumber: 17,
                severityText: 'ERROR',
                body: { stringValue: `probe ${mark}` },
              },
            ],
          },
        ],
      },
    ],
  });
  const res = await post(`${otlpUrl}/v1/logs`, Buffer.from(body), { 'content-type': 'application/json' });
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  return performance.now();
}

/**
 * Polls `/v1/query` for `mark` every `pollMs` until it is returned or `boundMs` have passed. Resolves with
 * `performance.now()` when it was first returned, or `null`. `range` is the query's window stage.
 */
export async function waitVisible(
  queryUrl: string,
  mark: string,
  boundMs: number,
  options: { readonly range?: string; readonly pollMs?: number } = {},
): Promise<number | null> {
  const deadline = performance.now() + boundMs;
  const query = `contains(body, "${mark}") | ${options.range ?? 'range(-1h, now)'} | limit 1`;
  for (;;) {
    const answer = await postQuery(queryUrl, FRESH_TENANT, query);
    if (answer.status !== 200) throw new Error(`query answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    if (answer.text.includes(mark)) return performance.now();
    if (performance.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 50));
  }
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
