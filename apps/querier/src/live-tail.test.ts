/**
 * @module live-tail.test
 * `POST /v1/tail` (docs/design/query-governance.md, "Live tail") over a real socket, real query workers and a real
 * local store that the test writes as the sink does (one Parquet file per flush in the hour partition) and
 * compacts with the real compactor while the hour is open. Every poll waits on a gate the test opens, so which
 * files a poll meets is decided by the test, not by timing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { compactPartition } from '@sluice/compaction';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type ObjectStore } from '@sluice/storage';
import type { TailEnd, TailHooks, TailSummary } from './tail-session.js';
import { harness, query, row, within, type Harness, type HarnessOptions } from './testing/query-harness.js';

/** How long a wait for an event the test has made certain may take: long, because a loaded 2-core machine is slow,
 * and it bounds only how long a broken build takes to fail, never what the test proves. */
const SETTLE_MS = 60_000;

const HOUR_MS = 3_600_000;
const MS_NS = 1_000_000n;

let dir: string;
let store: ObjectStore;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'live-tail-'));
  store = createLocalObjectStore({ root: dir });
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Ten minutes into the current hour: every file of a test lands in one partition, whenever the test runs. */
function inThisHourNs(): bigint {
  return BigInt(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 600_000) * MS_NS;
}

/** Writes one data file (as one sink flush) whose rows carry `bodies`; returns its key. */
async function flush(tenant: string, atNs: bigint, bodies: readonly string[]): Promise<string> {
  const rows = bodies.map((b, i) => row(tenant, atNs + BigInt(i) * 1_000_000n, b));
  const key = dataFileKey(tenant, atNs, uuidv7());
  await store.put(key, await encodeLogsParquet(rows, { rowGroupRows: 100 }));
  return key;
}

/** Runs the real compactor on an hour partition that is still open (its clock set past the hour). */
async function compactOpenHour(key: string): Promise<void> {
  const prefix = key.slice(0, key.lastIndexOf('/') + 1);
  const outcome = await compactPartition(store, prefix, { now: () => Date.now() + 2 * HOUR_MS, graceSecs: 600 });
  assert.equal(outcome.status, 'committed', JSON.stringify(outcome));
}

/** A gate for the tail's polls: each poll waits until the test lets one through. */
function pollGate(): { hooks: TailHooks; next(): Promise<void>; ends: { end: TailEnd; summary: TailSummary }[] } {
  const waiting: (() => void)[] = [];
  const ends: { end: TailEnd; summary: TailSummary }[] = [];
  let answered = 0;
  return {
    ends,
    hooks: {
      beforePoll: (signal) =>
        new Promise<void>((resolve) => {
          waiting.push(resolve);
          // A tail that ends while it waits leaves the gate.
          signal.addEventListener(
            'abort',
            () => {
              waiting.splice(waiting.indexOf(resolve), 1);
              resolve();
            },
            { once: true },
          );
        }),
      afterPoll: () => answered++,
      onEnd: (end, summary) => ends.push({ end, summary }),
    },
    /** Lets one poll run and waits until it has been answered. */
    async next() {
      await within(SETTLE_MS, () => waiting.length > 0, 'a poll waiting at the gate');
      const target = answered + 1;
      waiting.shift()?.();
      await within(SETTLE_MS, () => answered >= target, 'the poll answered');
    },
  };
}

interface Served {
  readonly h: Harness;
  readonly port: number;
  stop(): Promise<void>;
}

type TailSettings = NonNullable<HarnessOptions['tails']>;

async function served(tails: Partial<TailSettings>, o: Partial<HarnessOptions> = {}): Promise<Served> {
  const h = harness({
    dir,
    maxConcurrent: 1,
    queryTimeoutMs: 0,
    streamBatchBytes: 4096,
    ...o,
    tails: { maxLiveTails: 10, maxTailMs: 60_000, maxTailBufferBytes: 1 << 20, pollMs: 1, ...tails },
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return {
    h,
    port: (server.address() as AddressInfo).port,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if ('closeAllConnections' in server) server.closeAllConnections();
      await closed;
      await h.close();
    },
  };
}

/** An open tail: its lines as they arrive (parsed), the response, and the request to close it. */
interface Tail {
  readonly res: IncomingMessage;
  readonly req: ClientRequest;
  readonly lines: Record<string, unknown>[];
  /** Everything received so far, as text. */
  text(): string;
  /** Resolves when the response has ended. */
  readonly ended: Promise<void>;
}

function openTail(port: number, tenant: string, dsl: string, path = '/v1/tail', read = true): Promise<Tail> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path, headers: { 'X-Sluice-Tenant': tenant } },
      (res) => {
        const lines: Record<string, unknown>[] = [];
        let partial = '';
        let all = '';
        res.setEncoding('utf8');
        const ended = new Promise<void>((done) => {
          res.on('end', () => done());
          res.on('close', () => done());
          res.on('error', () => done());
        });
        res.on('data', (chunk: string) => {
          all += chunk;
          if (res.statusCode !== 200) return;
          partial += chunk;
          const parts = partial.split('\n');
          partial = parts.pop() ?? '';
          for (const p of parts) lines.push(JSON.parse(p) as Record<string, unknown>);
        });
        if (!read) res.pause();
        resolve({ res, req, lines, ended, text: () => all });
      },
    );
    req.on('error', reject);
    req.end(dsl);
  });
}

/** Tail reservations in the pool's slot table. */
const tailReservations = (h: Harness): number => h.pool.consumers().filter((c) => c.queryId.startsWith('tail')).length;

const bodies = (t: Tail): unknown[] =>
  t.lines.filter((l) => 'body' in l).map((l) => (l['body'] as { line: string }).line);

describe('live tail: what it sends', () => {
  test('a tail sends the records written after it started, in order, exactly once, across compactions of the open hour', async () => {
    const gate = pollGate();
    const s = await served({ hooks: gate.hooks });
    try {
      const at = inThisHourNs();
      // Written (and timed) before the tail starts: not part of a tail without a look-back.
      const before = await flush('acme', BigInt(Date.now() - 1000) * MS_NS, ['old 1', 'old 2']);
      const tail = await openTail(s.port, 'acme', 'true');
      assert.equal(tail.res.statusCode, 200);
      assert.equal(tail.res.headers['content-type'], 'application/x-ndjson');
      await gate.next(); // first poll: the file written before the tail started is passed over
      assert.deepEqual(bodies(tail), []);

      const a = await flush('acme', at, ['a1', 'a2', 'a3']);
      await gate.next();
      await within(5000, () => bodies(tail).length === 3, 'the first file arrived');
      assert.deepEqual(bodies(tail), ['a1', 'a2', 'a3']);

      // b is compacted together with a (already sent) before the tail meets it: only b's own rows may come.
      await flush('acme', at, ['b1', 'b2']);
      await compactOpenHour(a);
      await gate.next();
      await within(5000, () => bodies(tail).length === 5, 'the second file arrived');

      // c is adopted by the next compaction (late into a compacted partition), beside the output that holds a, b.
      await flush('acme', at, ['c1']);
      await compactOpenHour(a);
      await gate.next();
      await within(5000, () => bodies(tail).length === 6, 'the third file arrived');

      // Polls that meet nothing new send nothing.
      await gate.next();
      await gate.next();
      assert.deepEqual(bodies(tail), ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
      assert.ok(before !== a);

      tail.req.destroy();
      await within(5000, () => gate.ends.length === 1, 'the tail ended');
      assert.equal(gate.ends[0]?.end.kind, 'client_closed');
      assert.deepEqual(gate.ends[0]?.summary, { rows: 6, dropped: 0, missedFiles: 0 });
    } finally {
      await s.stop();
    }
  });

  test('a replaced file deleted before the tail read it is reported missed, and its records are not sent twice or at all', async () => {
    const gate = pollGate();
    const s = await served({ hooks: gate.hooks });
    try {
      const at = inThisHourNs() + 60_000_000_000n;
      const tail = await openTail(s.port, 'gone', 'true');
      await gate.next();
      const a = await flush('gone', at, ['a1']);
      await gate.next();
      await within(5000, () => bodies(tail).length === 1, 'a arrived');
      const x = await flush('gone', at, ['x1']);
      await compactOpenHour(a);
      await store.delete(x);
      await gate.next();
      const y = await flush('gone', at, ['y1']);
      await compactOpenHour(y);
      await gate.next();
      await within(5000, () => bodies(tail).length === 2, 'y arrived');
      assert.deepEqual(bodies(tail), ['a1', 'y1']);
      tail.req.destroy();
      await within(5000, () => gate.ends.length === 1, 'the tail ended');
      assert.equal(gate.ends[0]?.summary.missedFiles, 1);
    } finally {
      await s.stop();
    }
  });

  test('since returns the look-back (seconds or an RFC 3339 time), and the predicate and project apply', async () => {
    const gate = pollGate();
    const s = await served({ hooks: gate.hooks });
    try {
      const nowNs = BigInt(Date.now()) * MS_NS;
      await flush('back', nowNs - 600n * 1_000_000_000n, ['ten minutes ago']);
      await flush('back', nowNs - 60n * 1_000_000_000n, ['a minute ago', 'a minute ago, other']);
      const bySeconds = await openTail(s.port, 'back', 'body =~ "minute ago$"', '/v1/tail?since=300');
      assert.equal(bySeconds.res.statusCode, 200, bySeconds.text());
      await gate.next();
      await within(5000, () => bodies(bySeconds).length === 1, 'the look-back arrived');
      assert.deepEqual(bodies(bySeconds), ['a minute ago']);
      bySeconds.req.destroy();
      const from = new Date(Date.now() - 900_000).toISOString().replace(/\.\d+Z$/, 'Z');
      const byTime = await openTail(s.port, 'back', 'true | project body', `/v1/tail?since=${from}`);
      assert.equal(byTime.res.statusCode, 200, byTime.text());
      await gate.next();
      await within(5000, () => bodies(byTime).length === 3, 'the look-back arrived');
      assert.deepEqual(bodies(byTime), ['ten minutes ago', 'a minute ago', 'a minute ago, other']);
      assert.deepEqual(Object.keys(byTime.lines[0] ?? {}), ['body'], 'project keeps only the body');
      byTime.req.destroy();
    } finally {
      await s.stop();
    }
  });

  test('an aggregation, a limit, a range or a bad since is refused invalid_query (400) naming the problem', async () => {
    const s = await served({});
    try {
      for (const [dsl, path, needle] of [
        ['true | count', '/v1/tail', 'count stage'],
        ['true | limit 5', '/v1/tail', 'limit stage'],
        ['true | range(-5m, now)', '/v1/tail', 'range stage'],
        ['true', '/v1/tail?since=yesterday', 'since must be'],
        ['drift from -1h to now', '/v1/tail', 'drift'],
      ] as const) {
        const tail = await openTail(s.port, 'acme', dsl, path);
        await tail.ended;
        assert.equal(tail.res.statusCode, 400, dsl);
        const error = (JSON.parse(tail.text()) as { error: { kind: string; message: string } }).error;
        assert.equal(error.kind, 'invalid_query');
        assert.ok(error.message.includes(needle), `${error.message} names ${needle}`);
      }
      assert.equal(s.h.tails?.openCount(), 0, 'a refused request takes no slot');
    } finally {
      await s.stop();
    }
  });
});

describe('live tail: bounds', () => {
  test('the max_live_tails + 1-th tail is refused 503 query_tail_limit; closing a tail frees its slot and pool bytes', async () => {
    const gate = pollGate();
    const s = await served({ hooks: gate.hooks, maxLiveTails: 2 });
    try {
      const idle = s.h.pool.reserved();
      const one = await openTail(s.port, 'acme', 'true');
      const two = await openTail(s.port, 'acme', 'true');
      assert.equal(s.h.tails?.openCount(), 2);
      const third = await openTail(s.port, 'other', 'true');
      await third.ended;
      assert.equal(third.res.statusCode, 503);
      const error = (JSON.parse(third.text()) as { error: Record<string, unknown> }).error;
      assert.equal(error['kind'], 'query_tail_limit');
      assert.equal(error['limit'], 'querier.limits.max_live_tails');
      assert.equal(error['ceiling'], 2);
      assert.equal(error['retryable'], true);

      one.req.destroy();
      await within(5000, () => s.h.tails?.openCount() === 1, 'the closed tail gave its slot back');
      await within(5000, () => s.h.pool.reserved() === idle, 'the pool is back to its idle value');
      assert.equal(tailReservations(s.h), 1, 'the closed tail’s reservation left the pool’s slot table');
      const again = await openTail(s.port, 'other', 'true');
      assert.equal(again.res.statusCode, 200, 'a freed slot takes a new tail');
      two.req.destroy();
      again.req.destroy();
      await within(5000, () => s.h.tails?.openCount() === 0 && s.h.pool.reserved() === idle, 'all released');
    } finally {
      await s.stop();
    }
  });

  test('an open tail holds no admission permit between polls: /v1/query is served with one permit', async () => {
    const gate = pollGate();
    const s = await served({ hooks: gate.hooks });
    try {
      const tail = await openTail(s.port, 'acme', 'true');
      await gate.next();
      assert.equal(s.h.gate.inFlight(), 0);
      const answer = await query(s.h, 'acme', { query: 'true | limit 1' });
      assert.equal(answer.status, 200);
      tail.req.destroy();
    } finally {
      await s.stop();
    }
  });

  test('max_tail_secs ends a tail with a final line saying why, and frees its slot', async () => {
    const s = await served({ maxTailMs: 300, pollMs: 20 });
    try {
      const idle = s.h.pool.reserved();
      const tail = await openTail(s.port, 'acme', 'true');
      await tail.ended;
      const last = tail.lines.at(-1);
      assert.equal(last?.['end'], 'max_tail_secs');
      assert.equal(typeof last?.['rows'], 'number');
      await within(5000, () => s.h.tails?.openCount() === 0 && s.h.pool.reserved() === idle, 'released');
    } finally {
      await s.stop();
    }
  });

  test('a client that does not read gets {"dropped":n}, and the tail’s pool bytes are freed (read late, or never)', async () => {
    const at = BigInt(Date.now()) * MS_NS - 5_000_000_000n;
    const big = Array.from({ length: 12_000 }, (_, i) => `${i} ${'x'.repeat(1000)}`);
    await flush('slow', at, big);
    for (const readLate of [true, false]) {
      const gate = pollGate();
      // The late reader gets a linger far longer than the test can take to resume reading (a 200 ms one lost the
      // last line to a loaded CI machine); the reader that never reads gets a short one, to prove it disconnects.
      const s = await served(
        { hooks: gate.hooks, maxTailBufferBytes: 65_536, lingerMs: readLate ? 60_000 : 200 },
        { limits: { maxResultBytes: 64 << 20 } },
      );
      try {
        const idle = s.h.pool.reserved();
        const tail = await openTail(s.port, 'slow', 'true', '/v1/tail?since=60', false);
        await gate.next();
        await within(SETTLE_MS, () => gate.ends.length === 1, 'the tail gave up on its client');
        const { end, summary } = gate.ends[0]!;
        assert.equal(end.kind, 'dropped');
        assert.ok(summary.dropped > 0, 'some records were dropped');
        assert.ok(summary.rows + summary.dropped <= big.length);
        if (readLate) {
          tail.res.resume();
          await tail.ended;
          const last = tail.lines.at(-1);
          assert.equal(last?.['dropped'], summary.dropped);
          assert.equal(last?.['end'], 'client_too_slow');
          assert.equal(bodies(tail).length, summary.rows, 'every record written before the drop arrived');
        }
        // Never read: the linger disconnects it. Either way nothing stays reserved.
        await within(SETTLE_MS, () => s.h.tails?.openCount() === 0, 'the slot is free');
        await within(SETTLE_MS, () => s.h.pool.reserved() === idle, 'the pool is back to its idle value');
        assert.equal(tailReservations(s.h), 0, 'the tail’s reservation left the pool’s slot table');
        tail.req.destroy();
      } finally {
        await s.stop();
      }
    }
  });
});
