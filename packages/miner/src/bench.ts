/**
 * @module bench
 * Throughput of `Miner.mine` on a realistic mix, single-threaded: 85 % lines from the ten printf templates of the
 * corpus, 10 % a long tail of random word lines, 5 % structured bodies; three tenants. Records are built up front
 * so only mining is timed. Run: `node packages/miner/dist/bench.js [lines]`.
 */
import type { LogRecord } from '@sluice/core';
import { createMiner } from './miner.js';
import type { Miner } from './miner.js';
import { corpus, int, prng, record, word } from './test-support.js';

/** Builds `count` (tenant, record) pairs of the mix. */
export function benchMix(count: number, seed = 1): [string, LogRecord][] {
  const rnd = prng(seed);
  const lines = corpus(Math.ceil(count / 10), seed);
  const tenants = ['acme', 'globex', 'initech'];
  const out: [string, LogRecord][] = [];
  for (let i = 0; i < count; i++) {
    const tenant = tenants[i % 3] as string;
    const roll = rnd();
    let rec: LogRecord;
    if (roll < 0.05) rec = record({ kind: 'kvlist', values: [] }, { severityNumber: int(rnd, 1, 24) });
    else if (roll < 0.15) {
      const n = int(rnd, 3, 20);
      const w: string[] = [];
      for (let k = 0; k < n; k++) w.push(word(rnd));
      rec = record(w.join(' '));
    } else rec = record((lines[i] ?? lines[0])?.line ?? '');
    out.push([tenant, rec]);
  }
  return out;
}

/** Mines `records` once; returns lines per second. */
export function measure(miner: Miner, records: readonly [string, LogRecord][]): number {
  const t0 = process.hrtime.bigint();
  for (const [tenant, rec] of records) miner.mine(tenant, rec);
  const ns = Number(process.hrtime.bigint() - t0);
  return records.length / (ns / 1e9);
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const count = Number(process.argv[2] ?? 500_000);
  const records = benchMix(count);
  const miner = createMiner();
  measure(miner, benchMix(50_000, 99)); // warm-up (JIT), different values
  const rates: number[] = [];
  for (let run = 0; run < 3; run++) rates.push(measure(miner, records));
  const s = miner.stats();
  process.stdout.write(
    `mined ${count} lines × 3 runs: ${rates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')} lines/s; ` +
      `templates acme=${miner.templateCount('acme')} globex=${miner.templateCount('globex')} ` +
      `initech=${miner.templateCount('initech')}; parse failures ${JSON.stringify(s.parseFailures)}\n`,
  );
}
