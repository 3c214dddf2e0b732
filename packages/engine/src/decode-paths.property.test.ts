/**
 * @module decode-paths.property.test
 * The columnar page decoder and column-at-a-time evaluation answer exactly as the hyparquet row path: random
 * corpora (NULL and empty bodies, multi-byte UTF-8, a leading BOM, u64 template ids at and above 2^63, dictionary
 * and PLAIN string chunks, bodies long enough to span several pages), written by both encoders, and random
 * predicates, windows and stages run through both decoders must give byte-identical bodies (bytes_read aside).
 * Trace and span ids (FIXED_LEN_BYTE_ARRAY with NULLs) and `lossy_flag` (BOOLEAN) are compared too: as
 * predicates and in rendered records.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyValue, KeyValue } from '@sluice/core';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import {
  LOG_COLUMNS,
  createLocalObjectStore,
  dataFileKey,
  encodeLogsParquet,
  openParquetFile,
  sourceFromBytes,
  uuidv7,
} from '@sluice/storage';
import { readOffsetIndex } from 'hyparquet';
import { UnsupportedChunk, chunkKind, chunkRange, decodeChunk, plainOnlyChunk } from './decode/page-decoder.js';
import { byteNeedle, searchRows } from './decode/byte-search.js';
import { SearchOnlyStrings } from './decode/search-only.js';
import { planLogQuery } from './log-plan.js';
import { parseQuery } from '@sluice/query';
import {
  BooleanVector,
  DictStringVector,
  FixedBytesVector,
  PlainStringVector,
  cell,
  type ColumnData,
} from './decode/string-vector.js';
import { H, T0, makeRows, prng } from './testing/corpus.js';
import { run } from './testing/harness.js';

const NOW = T0 + 4n * H;
const MODES = [
  { manyServices: false, longBodies: false },
  { manyServices: true, longBodies: false },
  { manyServices: false, longBodies: true },
] as const;
const HOT: readonly string[] = [
  LOG_COLUMNS.templateId,
  LOG_COLUMNS.timeUnixNano,
  LOG_COLUMNS.effectiveTimeUnixNano,
  LOG_COLUMNS.severityNumber,
  LOG_COLUMNS.body,
  LOG_COLUMNS.tenantId,
  'resource.service.name',
  LOG_COLUMNS.traceId,
  LOG_COLUMNS.spanId,
  LOG_COLUMNS.lossyFlag,
];
/**
 * Small data pages (1 KiB of values: 128 times per page), so a 400-row group has several effective-time pages and
 * a window edge inside a group skips pages through the page index on the columnar path (the reference path
 * reads whole groups).
 */
const PAGE_BYTES = 1024;
const NO_POOL = { grow: (n: number): number => n, shrink: (): void => undefined };

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/** Pieces bodies and services are made of: multi-byte UTF-8, a BOM, the empty string, needles. */
const PIECES = ['timed out', 'ok', 'Ünïcödé', '日本語', '🚀', '\uFEFFbom', '', 'a', 'é', 'x y', 'id=1', 'tim'];
const NEEDLES = ['timed out', 'Ünï', '日本', '🚀', 'a', '', 'é', 'x', 'bom', 'out', 'id=', 'zzz', 'ok 🚀'];
/**
 * Id literals (the parser takes only hex of the id's length): ids that occur in the corpora (filled in `before`),
 * their upper-case form (the string path lower-cases literals), and an id no row has.
 */
const TRACE_IDS: string[] = ['00'.repeat(16)];
const SPAN_IDS: string[] = ['00'.repeat(8)];

/** A random corpus; `mode` picks dictionary-sized or PLAIN-sized services and short or page-spanning bodies. */
function corpus(seed: number, mode: { manyServices: boolean; longBodies: boolean }): StoredLogRow[] {
  const rnd = prng(seed * 7919);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const base = makeRows({ tenant: 'acme', count: mode.longBodies ? 1500 : 3000, startNs: T0, spanNs: 4n * H, seed });
  return base.map((r, i) => {
    const roll = rnd();
    let body: AnyValue | null;
    if (roll < 0.1) body = null;
    else if (roll < 0.15) body = { kind: 'string', value: '' };
    else {
      const n = 1 + Math.floor(rnd() * 6);
      let text = Array.from({ length: n }, () => pick(PIECES)).join(rnd() < 0.5 ? ' ' : '');
      if (mode.longBodies) text += 'ü'.repeat(1000 + Math.floor(rnd() * 3000));
      body =
        rnd() < 0.9
          ? { kind: 'string', value: text }
          : { kind: 'kvlist', values: [{ key: 'm', value: { kind: 'string', value: text } }] };
    }
    const service = mode.manyServices
      ? `svc-${i}-${pick(PIECES)}${'é'.repeat(1500)}`
      : pick(['api', 'billing', 'Ünïcödé', '', '🚀']);
    const attributes: KeyValue[] = [{ key: 'service.name', value: { kind: 'string', value: service } }];
    const tplRoll = rnd();
    const templateId =
      tplRoll < 0.2
        ? (1n << 63n) + BigInt(i % 3)
        : tplRoll < 0.3
          ? 0xffffffffffffffffn
          : tplRoll < 0.4
            ? 70_000n
            : r.mined.templateId;
    return {
      ...r,
      record: { ...r.record, body, resource: { ...r.record.resource, attributes: rnd() < 0.05 ? [] : attributes } },
      mined: { ...r.mined, templateId },
    };
  });
}

async function writeCorpus(
  store: ObjectStore,
  rows: readonly StoredLogRow[],
  encoder: 'columnar' | 'hyparquet-writer',
): Promise<void> {
  const byHour = new Map<bigint, StoredLogRow[]>();
  for (const r of rows) {
    const h = r.record.timeUnixNano / H;
    byHour.set(h, [...(byHour.get(h) ?? []), r]);
  }
  for (const [h, list] of byHour)
    await store.put(
      dataFileKey('acme', h * H, uuidv7()),
      await encodeLogsParquet(list, { rowGroupRows: 400, encoder, pageTargetBytes: PAGE_BYTES }),
    );
}

/** Pages listed in a chunk's offset index. */
async function windowRowSpanPages(
  bytes: Uint8Array,
  c: { offset_index_offset?: bigint; offset_index_length?: number },
): Promise<number | undefined> {
  if (c.offset_index_offset === undefined || c.offset_index_length === undefined) return undefined;
  const at = Number(c.offset_index_offset);
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, c.offset_index_length);
  return readOffsetIndex({ view, offset: 0 }).page_locations.length;
}

function randomPredicate(rnd: () => number, depth = 0): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const quote = (s: string): string => JSON.stringify(s);
  const roll = rnd();
  if (depth < 2 && roll < 0.25) {
    const op = pick(['and', 'or']);
    return `(${randomPredicate(rnd, depth + 1)} ${op} ${randomPredicate(rnd, depth + 1)})`;
  }
  if (depth < 2 && roll < 0.3) return `not ${randomPredicate(rnd, depth + 1)}`;
  return pick([
    () => `contains(body, ${quote(pick(NEEDLES))})`,
    () => `starts_with(body, ${quote(pick(NEEDLES))})`,
    () => `ends_with(body, ${quote(pick(NEEDLES))})`,
    () => `matches(body, ${quote(pick(['tim.*out', '^Ü', '🚀$', 'a|é']))})`,
    () => `service =~ ${quote(pick(['^a', 'ü|🚀', '^$']))}`,
    () => `service == ${quote(pick(['api', 'billing', 'Ünïcödé', '', '🚀', 'svc-3-ok']))}`,
    () => `service != ${quote(pick(['api', '🚀']))}`,
    () => `contains(service, ${quote(pick(NEEDLES))})`,
    () =>
      `template_id == ${pick(['2', '3', '70000', String(1n << 63n), '18446744073709551615', '9223372036854775810'])}`,
    () => `template_id != ${pick(['2', String(1n << 63n)])}`,
    () => `severity >= ${pick(['info', 'warn', 'error'])}`,
    () => `scope == ${quote(pick(['app.http', 'app.db']))}`,
    () => `event_name == "app.login"`,
    () => `trace_id ${pick(['==', '==', '!='])} ${quote(pick(TRACE_IDS))}`,
    () => `span_id ${pick(['==', '!='])} ${quote(pick(SPAN_IDS))}`,
    () => `lossy == ${pick(['true', 'false'])}`,
    () => 'true',
  ])();
}

function randomQuery(rnd: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const from = T0 + BigInt(Math.floor(rnd() * 3 * 3600)) * 1_000_000_000n;
  const to = from + BigInt(1 + Math.floor(rnd() * 2 * 3600)) * 1_000_000_000n;
  const window = rnd() < 0.4 ? `range(${iso(T0)}, ${iso(T0 + 4n * H)})` : `range(${iso(from)}, ${iso(to)})`;
  const stage = pick([
    'count',
    'count by template_id',
    'count by service',
    'count by service, bucket(5m)',
    'count by bucket(10m)',
    'count by scope, template_id',
    'count by severity',
    'count by event_name',
    'limit 7',
    'limit 50',
    'sort ts desc | limit 5',
    'count by template_id | sort count desc',
  ]);
  return `${randomPredicate(rnd)} | ${window} | ${stage}`;
}

function withoutBytesRead(text: string): string {
  return text.replace(/"bytes_read":\d+/, '"bytes_read":0');
}

describe('columnar decode answers as the hyparquet path', () => {
  let dir = '';
  const stores: { name: string; store: ObjectStore }[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'decode-paths-'));
    let seed = 1;
    for (const mode of MODES) {
      const rows = corpus(seed++, mode);
      for (const at of [3, 200, 1100]) {
        const hex = Buffer.from(rows[at]?.record.traceId ?? []).toString('hex');
        if (hex !== '') TRACE_IDS.push(hex, hex.toUpperCase());
        const span = Buffer.from(rows[at]?.record.spanId ?? []).toString('hex');
        if (span !== '') SPAN_IDS.push(span);
      }
      for (const encoder of ['columnar', 'hyparquet-writer'] as const) {
        const name = `${encoder} ${JSON.stringify(mode)}`;
        const store = createLocalObjectStore({ root: join(dir, String(stores.length)) });
        await writeCorpus(store, rows, encoder);
        stores.push({ name, store });
      }
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('random predicates, windows and stages give identical bodies through both decoders, on files from both encoders', async () => {
    const rnd = prng(20261203);
    let nonEmpty = 0;
    for (let k = 0; k < 240; k++) {
      const text = randomQuery(rnd);
      const { name, store } = stores[k % stores.length] as { name: string; store: ObjectStore };
      const ref = await run(store, text, { nowNs: NOW, decoder: 'hyparquet' });
      const col = await run(store, text, { nowNs: NOW, decoder: 'columnar' });
      assert.equal(col.outcome.status, ref.outcome.status, `${name}: ${text}`);
      assert.equal(withoutBytesRead(col.text), withoutBytesRead(ref.text), `${name}: ${text}`);
      if (ref.json?.rows > 0) nonEmpty++;
    }
    assert.ok(nonEmpty > 120, `most random queries match something (${nonEmpty})`);
  });

  test('edge needles (a leading BOM, length-prefix bytes, the empty string, U+FFFD) give identical bodies through both decoders', async () => {
    const W = `range(${iso(T0)}, ${iso(T0 + 4n * H)})`;
    const needles = [
      'bom',
      '\uFEFFbom',
      '\u0003\u0000',
      '\u0006\u0000\u0000\u0000',
      '\n\u0000',
      '',
      '\uFFFD',
      'ok',
      '🚀',
    ];
    for (const { name, store } of stores) {
      for (const fn of ['contains', 'starts_with', 'ends_with']) {
        for (const needle of needles) {
          for (const stage of ['count', 'limit 20']) {
            const text = `${fn}(body, ${JSON.stringify(needle)}) | ${W} | ${stage}`;
            const ref = await run(store, text, { nowNs: NOW, decoder: 'hyparquet' });
            const col = await run(store, text, { nowNs: NOW, decoder: 'columnar' });
            assert.equal(withoutBytesRead(col.text), withoutBytesRead(ref.text), `${name}: ${text}`);
          }
        }
      }
    }
  });

  test('a slice read gives every row of its range as the whole-group read does, for every column of both encoders', async () => {
    // The slice layout (targeted rendering) lays out only a range's rows; ranges start and end inside pages.
    const rnd = prng(20261204);
    let seed = 1;
    let compared = 0;
    for (const mode of MODES) {
      const rows = corpus(seed++, mode).slice(0, 400);
      for (const encoder of ['columnar', 'hyparquet-writer'] as const) {
        const bytes = await encodeLogsParquet(rows, { rowGroupRows: 400, encoder, pageTargetBytes: PAGE_BYTES });
        const file = await openParquetFile(sourceFromBytes(bytes));
        const elements = new Map(file.metadata.schema.map((e) => [e.name, e]));
        for (const c of file.metadata.row_groups[0]?.columns ?? []) {
          const md = c.meta_data;
          if (md === undefined) continue;
          const name = md.path_in_schema[0] ?? '';
          const element = elements.get(name) ?? { name };
          const kind = chunkKind(md, element);
          if (kind === undefined) continue;
          const { start, length } = chunkRange(md);
          const chunk = bytes.subarray(start, start + length);
          let whole: ColumnData;
          try {
            whole = decodeChunk(chunk, md, element, kind, 400, NO_POOL).data;
          } catch (e) {
            if (e instanceof UnsupportedChunk) continue;
            throw e;
          }
          for (let k = 0; k < 6; k++) {
            const a = Math.floor(rnd() * 400);
            const range = { start: a, end: Math.min(400, a + 1 + Math.floor(rnd() * 150)) };
            const slice: ColumnData = decodeChunk(chunk, md, element, kind, 400, NO_POOL, range, 'slice').data;
            for (let i = range.start; i < range.end; i++)
              assert.deepEqual(
                cell(slice, i),
                cell(whole, i),
                `${encoder} ${name} row ${i} of [${range.start}, ${range.end})`,
              );
            assert.equal(cell(slice, range.end), null, 'a row past the slice reads NULL');
            compared++;
          }
        }
      }
    }
    assert.ok(compared > 100, `${compared} slices compared`);
  });

  test('a search-only body gives every byte search the hits of the decoded column, whole groups and window spans', async () => {
    const rnd = prng(20261206);
    let searched = 0;
    for (const mode of MODES) {
      const rows = corpus(40 + searched, mode).slice(0, 400);
      for (const encoder of ['columnar', 'hyparquet-writer'] as const) {
        const bytes = await encodeLogsParquet(rows, { rowGroupRows: 400, encoder, pageTargetBytes: PAGE_BYTES });
        const file = await openParquetFile(sourceFromBytes(bytes));
        const md = file.metadata.row_groups[0]?.columns.find(
          (c) => c.meta_data?.path_in_schema[0] === 'body',
        )?.meta_data;
        const element = file.metadata.schema.find((e) => e.name === 'body');
        assert.ok(md !== undefined && element !== undefined);
        const { start, length } = chunkRange(md);
        const chunk = bytes.subarray(start, start + length);
        if (!plainOnlyChunk(chunk, md)) continue;
        for (let k = 0; k < 4; k++) {
          // A window span (page-aligned or not: only the pages it touches are decoded) or the whole group.
          const a = Math.floor(rnd() * 400);
          const b = a + Math.floor(rnd() * (400 - a));
          const span = k === 0 ? undefined : { start: a, end: b };
          const decoded: ColumnData = decodeChunk(chunk, md, element, 'utf8', 400, NO_POOL, span).data;
          assert.ok(decoded instanceof PlainStringVector);
          const held = { bytes: 0 };
          const reserve = {
            grow: (n: number): number => ((held.bytes += n), n),
            shrink: (n: number): void => void (held.bytes -= n),
          };
          const only: SearchOnlyStrings = new SearchOnlyStrings(400, chunk, md, element, reserve, span, (e) => e);
          for (const fn of ['contains', 'starts_with', 'ends_with'] as const) {
            for (const needle of NEEDLES) {
              const bytesNeedle = byteNeedle(needle);
              if (bytesNeedle === undefined) continue;
              assert.deepEqual(only.search(fn, bytesNeedle), searchRows(decoded, fn, bytesNeedle), `${fn} ${needle}`);
              assert.equal(held.bytes, 0, 'every page reservation is given back');
              searched++;
            }
          }
          assert.throws(() => only.get(), /read row by row/);
        }
      }
    }
    assert.ok(searched > 500, `${searched} searches`);
  });

  test('a column is search-only only in an aggregation that reads nothing else of it', () => {
    const plan = (q: string) => {
      const parsed = parseQuery(q);
      assert.ok(parsed.ok && parsed.value.kind !== 'drift', q);
      return planLogQuery(parsed.value, {
        tenant: 'acme',
        nowNs: NOW,
        defaultWindowSecs: 3600,
        limits: { defaultRows: 100, maxRows: 1000 },
      }).searchOnly;
    };
    const R = 'range(2026-06-01T00:00:00Z, 2026-06-01T04:00:00Z)';
    assert.deepEqual([...plan(`contains(body, "x") | ${R} | count`)], ['body']);
    assert.deepEqual([...plan(`not contains(body, "x") and service == "api" | ${R} | count by service`)], ['body']);
    assert.deepEqual(
      [...plan(`(contains(body, "x") or ends_with(body, "y")) | ${R} | count`)],
      [],
      'two searches: decoded once and searched twice',
    );
    assert.deepEqual([...plan(`contains(body, "x") | ${R} | count by body`)], [], 'a group term reads the body');
    assert.deepEqual([...plan(`contains(body, "x") | ${R} | limit 10`)], [], 'records render the body');
    assert.deepEqual([...plan(`contains(body, "x") and body =~ "y" | ${R} | count`)], [], 'a regex reads the text');
    assert.deepEqual([...plan(`matches(body, "x") | ${R} | count`)], []);
    assert.deepEqual([...plan(`contains(body, "x") | ${R} | sum(body_bytes)`)], [], 'the aggregate reads the body');
    assert.deepEqual([...plan(`contains(body, "\uFFFD") | ${R} | count`)], [], 'a needle the byte path cannot answer');
  });

  test('the corpora exercise dictionary and PLAIN string chunks and multi-page bodies, all through the columnar decoder', async () => {
    // A silent fallback to hyparquet, or corpora without these layouts, would make the comparison above vacuous.
    const seen = new Set<string>();
    let seed = 1;
    for (const mode of MODES) {
      const rows = corpus(seed++, mode).slice(0, 400);
      for (const encoder of ['columnar', 'hyparquet-writer'] as const) {
        const bytes = await encodeLogsParquet(rows, { rowGroupRows: 400, encoder, pageTargetBytes: PAGE_BYTES });
        const file = await openParquetFile(sourceFromBytes(bytes));
        const elements = new Map(file.metadata.schema.map((e) => [e.name, e]));
        for (const c of file.metadata.row_groups[0]?.columns ?? []) {
          const md = c.meta_data;
          if (md === undefined) continue;
          const name = md.path_in_schema[0] ?? '';
          if (!HOT.includes(name)) continue;
          const element = elements.get(name) ?? { name };
          const kind = chunkKind(md, element);
          assert.notEqual(kind, undefined, `${encoder}: ${name}`);
          const { start, length } = chunkRange(md);
          const d = decodeChunk(bytes.subarray(start, start + length), md, element, kind!, 400, NO_POOL).data;
          if (d instanceof DictStringVector) seen.add(`${encoder} ${name} dictionary`);
          if (name === LOG_COLUMNS.effectiveTimeUnixNano && c.column_index_length !== undefined) {
            const pages = (await windowRowSpanPages(bytes, c)) ?? 0;
            if (pages > 1) seen.add(`${encoder} ${name} page index`);
          }
          if (d instanceof BooleanVector && d.values.includes(0) && d.values.includes(1))
            seen.add(`${encoder} ${name} booleans`);
          if (d instanceof FixedBytesVector && d.present.includes(0) && d.present.includes(1))
            seen.add(`${encoder} ${name} fixed with NULLs`);
          if (d instanceof PlainStringVector) {
            seen.add(`${encoder} ${name} plain`);
            if (d.pages.length > 1) seen.add(`${encoder} ${name} pages`);
          }
        }
      }
    }
    for (const want of [
      'resource.service.name dictionary',
      'resource.service.name plain',
      'body plain',
      'body pages',
      'trace_id fixed with NULLs',
      'span_id fixed with NULLs',
      'effective_time_unix_nano page index',
      'lossy_flag booleans',
    ])
      assert.ok(seen.has(`columnar ${want}`), `columnar ${want}: ${[...seen].join('; ')}`);
    assert.ok(
      seen.has('hyparquet-writer body plain') || seen.has('hyparquet-writer body dictionary'),
      [...seen].join('; '),
    );
  });
});
