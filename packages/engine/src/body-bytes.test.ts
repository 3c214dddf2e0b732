/**
 * @module body-bytes.test
 * `sum|min|max|avg(body_bytes)` (packages/query/README.md, "Derived fields") equals a naive oracle over the same
 * rows: the UTF-8 byte length of each string body (multi-byte characters count their bytes, not their UTF-16
 * units), of a structured body's stored JSON, 0 for an empty or absent body, a leading BOM not counted (the
 * decoders drop it). Both decoders, over files from both encoders, with bodies short and page-spanning; and the
 * per-row reader on every column layout it meets.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyValue } from '@sluice/core';
import { anyValueToJson } from '@sluice/core';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7 } from '@sluice/storage';
import { bodyBytesReader } from './body-bytes.js';
import { DictStringVector, PlainStringVector } from './decode/string-vector.js';
import { H, T0, makeRows, prng } from './testing/corpus.js';
import { run } from './testing/harness.js';

const NOW = T0 + 4n * H;
const W = `range(${new Date(Number(T0 / 1_000_000n)).toISOString()}, ${new Date(Number((T0 + 4n * H) / 1_000_000n)).toISOString()})`;
const PIECES = ['héllo', '日本語', '🚀', 'ascii', 'é', '\uFFFD', 'x y z'];

/** Bytes of a body as the oracle sees it: the written text's UTF-8 length, minus a leading BOM. */
function oracleBytes(body: AnyValue | null): number {
  if (body === null) return 0;
  const text = body.kind === 'string' ? body.value : anyValueToJson(body);
  return Buffer.byteLength(text.startsWith('\uFEFF') ? text.slice(1) : text, 'utf8');
}

function corpus(seed: number, long: boolean): StoredLogRow[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  return makeRows({ tenant: 'acme', count: 2000, startNs: T0, spanNs: 4n * H, seed }).map((r) => {
    const roll = rnd();
    let body: AnyValue | null;
    if (roll < 0.1) body = null;
    else if (roll < 0.2) body = { kind: 'string', value: '' };
    else if (roll < 0.25) body = { kind: 'string', value: `\uFEFF${pick(PIECES)}` };
    else if (roll < 0.3)
      body = { kind: 'kvlist', values: [{ key: 'm', value: { kind: 'string', value: pick(PIECES) } }] };
    else {
      let text = Array.from({ length: 1 + Math.floor(rnd() * 5) }, () => pick(PIECES)).join(' ');
      if (long) text += '日'.repeat(500 + Math.floor(rnd() * 2000));
      body = { kind: 'string', value: text };
    }
    return { ...r, record: { ...r.record, body } };
  });
}

const serviceOf = (r: StoredLogRow): string => {
  const kv = r.record.resource.attributes.find((a) => a.key === 'service.name');
  return kv?.value.kind === 'string' ? kv.value.value : '';
};

describe('body_bytes aggregates the UTF-8 size of the body', () => {
  let dir = '';
  const stores: { name: string; store: ObjectStore; rows: StoredLogRow[] }[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'body-bytes-'));
    for (const long of [false, true]) {
      const rows = corpus(long ? 2 : 1, long);
      for (const encoder of ['columnar', 'hyparquet-writer'] as const) {
        const store = createLocalObjectStore({ root: join(dir, String(stores.length)) });
        for (let h = 0n; h < 4n; h++) {
          const part = rows.filter((r) => r.record.timeUnixNano / H === T0 / H + h);
          await store.put(
            dataFileKey('acme', T0 + h * H, uuidv7()),
            await encodeLogsParquet(part, { rowGroupRows: 300, encoder }),
          );
        }
        stores.push({ name: `${encoder} long=${long}`, store, rows });
      }
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('sum/min/max/avg(body_bytes) by service equal the oracle through both decoders, multi-byte bodies counted in bytes', async () => {
    for (const { name, store, rows } of stores) {
      const multiByte = rows.filter(
        (r) => r.record.body?.kind === 'string' && Buffer.byteLength(r.record.body.value) > r.record.body.value.length,
      );
      assert.ok(multiByte.length > 100, `${name}: the corpus has multi-byte bodies`);
      for (const fn of ['sum', 'min', 'max', 'avg'] as const) {
        for (const decoder of ['columnar', 'hyparquet'] as const) {
          const r = await run(store, `true | ${W} | ${fn}(body_bytes) by service`, { nowNs: NOW, decoder });
          assert.equal(r.outcome.status, 'ok', r.text);
          const got = new Map<string, number>(
            r.json.aggregate.map((g: { key: string[]; value: number }) => [g.key[0], g.value]),
          );
          for (const svc of new Set(rows.map(serviceOf))) {
            const sizes = rows.filter((x) => serviceOf(x) === svc).map((x) => oracleBytes(x.record.body));
            const want =
              fn === 'sum'
                ? sizes.reduce((a, b) => a + b, 0)
                : fn === 'min'
                  ? Math.min(...sizes)
                  : fn === 'max'
                    ? Math.max(...sizes)
                    : sizes.reduce((a, b) => a + b, 0) / sizes.length;
            assert.equal(got.get(svc), want, `${name} ${decoder} ${fn} ${svc}`);
          }
        }
      }
    }
  });

  test('sum(body_bytes) by severity, bucket(10m) under a body filter equals the oracle; empty and absent bodies add 0', async () => {
    for (const { name, store, rows } of stores) {
      const want = new Map<string, { count: number; bytes: number }>();
      for (const x of rows) {
        const b = x.record.body;
        // The predicate below drops these; `body` reads a structured body as its stored JSON.
        if (b !== null && (b.kind === 'string' ? b.value : anyValueToJson(b)).includes('é')) continue;
        const t = x.record.timeUnixNano;
        const key = `${x.record.severityNumber}|${new Date(Number(((t / 600_000_000_000n) * 600_000_000_000n) / 1_000_000n)).toISOString().replace('.000Z', 'Z')}`;
        const g = want.get(key) ?? { count: 0, bytes: 0 };
        g.count++;
        g.bytes += oracleBytes(b);
        want.set(key, g);
      }
      for (const decoder of ['columnar', 'hyparquet'] as const) {
        const text = `not contains(body, "é") | ${W} | sum(body_bytes) by severity, bucket(10m)`;
        const r = await run(store, text, { nowNs: NOW, decoder });
        assert.equal(r.outcome.status, 'ok', r.text);
        const got = new Map<string, { count: number; bytes: number }>(
          r.json.aggregate.map((g: { key: string[]; count: number; value: number }) => [
            g.key.join('|'),
            { count: g.count, bytes: g.value },
          ]),
        );
        assert.deepEqual(got, want, `${name} ${decoder}`);
      }
    }
  });

  test('the reader gives byte lengths on PLAIN, dictionary and decoded-string columns alike, NULL as 0', () => {
    const texts = ['', 'a', 'é', '日本語', '🚀', '\uFEFFbom', null] as const;
    const want = [0, 1, 2, 9, 4, 3, 0];
    const page = Buffer.concat(texts.map((t) => Buffer.from(t ?? '', 'utf8')));
    const lens = Int32Array.from(texts.map((t) => (t === null ? -1 : Buffer.byteLength(t, 'utf8'))));
    const starts = new Int32Array(texts.length);
    for (let i = 1; i < texts.length; i++) starts[i] = (starts[i - 1] as number) + Math.max(0, lens[i - 1] as number);
    const plain = new PlainStringVector(
      [page],
      new Uint16Array(texts.length),
      starts,
      lens,
      Int32Array.from([0, texts.length]),
    );
    const dict = new DictStringVector(
      texts.filter((t) => t !== null).map((t) => t.replace(/^\uFEFF/, '')),
      Int32Array.from(texts.map((t, i) => (t === null ? -1 : i))),
    );
    const strings = texts.map((t) => (t === null ? null : t.replace(/^\uFEFF/, '')));
    for (const [layout, col] of [
      ['plain', plain],
      ['dictionary', dict],
      ['strings', strings],
    ] as const) {
      const at = bodyBytesReader(col);
      assert.deepEqual(
        texts.map((_, i) => at(i)),
        want,
        layout,
      );
    }
  });
});
