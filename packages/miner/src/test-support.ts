/**
 * @module test-support
 * Record builders, a seeded PRNG and the printf-style corpus shared by this package's tests and benchmark.
 * Not exported from the package.
 */
import { PARAM_TYPE } from '@sluice/core';
import type { AnyValue, LogRecord, Param } from '@sluice/core';

const EMPTY_RESOURCE = Object.freeze({ attributes: [], droppedAttributesCount: 0, schemaUrl: '' });
const scopes = new Map<string, LogRecord['scope']>();

function scopeOf(name: string): LogRecord['scope'] {
  let s = scopes.get(name);
  if (s === undefined) {
    s = Object.freeze({ name, version: '', attributes: [], droppedAttributesCount: 0, schemaUrl: '' });
    scopes.set(name, s);
  }
  return s;
}

/** Options of {@link record}. */
export interface RecordOptions {
  readonly severityNumber?: number;
  readonly scope?: string;
  readonly timeUnixNano?: bigint;
  readonly observedTimeUnixNano?: bigint;
}

/** A log record with the given body (a string becomes a string AnyValue). */
export function record(body: string | AnyValue | null, o: RecordOptions = {}): LogRecord {
  return {
    timeUnixNano: o.timeUnixNano ?? 1_700_000_000_000_000_000n,
    observedTimeUnixNano: o.observedTimeUnixNano ?? 0n,
    severityNumber: o.severityNumber ?? 9,
    severityText: '',
    body: typeof body === 'string' ? { kind: 'string', value: body } : body,
    attributes: [],
    droppedAttributesCount: 0,
    flags: 0,
    traceId: new Uint8Array(0),
    spanId: new Uint8Array(0),
    eventName: '',
    resource: EMPTY_RESOURCE,
    scope: scopeOf(o.scope ?? 'app'),
  };
}

/** mulberry32: a tiny deterministic PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [lo, hi]. */
export function int(rnd: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rnd() * (hi - lo + 1));
}

/** A lowercase word of 3..10 letters (never contains a digit). */
export function word(rnd: () => number, min = 3, max = 10): string {
  let s = '';
  const n = int(rnd, min, max);
  for (let i = 0; i < n; i++) s += String.fromCharCode(97 + int(rnd, 0, 25));
  return s;
}

function hex(rnd: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += '0123456789abcdef'[int(rnd, 0, 15)];
  return s;
}

/** One instantiated corpus line and the params expected once its template has stabilized. */
export interface CorpusLine {
  readonly templateIndex: number;
  readonly line: string;
  readonly params: readonly Param[];
}

type Part = string | ((rnd: () => number) => Param);
const p = (typeTag: Param['typeTag'], value: string): Param => ({ typeTag, value });
const S = (r: () => number): Param => p(PARAM_TYPE.STR, word(r));
const D = (r: () => number): Param => p(PARAM_TYPE.NUM, String(int(r, 0, 100_000)));
const IP = (r: () => number): Param =>
  p(PARAM_TYPE.IP, `${int(r, 1, 254)}.${int(r, 0, 255)}.${int(r, 0, 255)}.${int(r, 1, 254)}`);

/** Printf-style corpus templates: their parts, and the text the miner must converge to. */
export const CORPUS_TEMPLATES: readonly { readonly parts: readonly Part[]; readonly expected: string }[] = [
  {
    parts: ['login', 'succeeded', 'for', 'user', S, 'from', IP, 'after', D, 'ms'],
    expected: 'login succeeded for user <*> from <*> after <*> ms',
  },
  {
    parts: [
      'GET',
      (r) => p(PARAM_TYPE.STR, `/api/v1/items/${int(r, 1, 99_999)}`),
      'returned',
      (r) => p(PARAM_TYPE.NUM, String([200, 201, 304, 404, 500][int(r, 0, 4)])),
      'in',
      D,
      'ms',
    ],
    expected: 'GET <*> returned <*> in <*> ms',
  },
  {
    parts: [
      'connection',
      'to',
      (r) => p(PARAM_TYPE.STR, `db-${int(r, 0, 999)}`),
      'timed',
      'out',
      'after',
      D,
      'retries',
    ],
    expected: 'connection to <*> timed out after <*> retries',
  },
  {
    parts: [
      'request',
      (r) => p(PARAM_TYPE.UUID, `${hex(r, 8)}-${hex(r, 4)}-4${hex(r, 3)}-a${hex(r, 3)}-${hex(r, 12)}`),
      'completed',
      'with',
      'status',
      D,
    ],
    expected: 'request <*> completed with status <*>',
  },
  {
    parts: ['cache', 'hit', 'ratio', (r) => p(PARAM_TYPE.NUM, (r() * 100).toFixed(3)), 'for', 'shard', D],
    expected: 'cache hit ratio <*> for shard <*>',
  },
  {
    parts: ['worker', (r) => p(PARAM_TYPE.HEX, `0x${hex(r, 6)}`), 'finished', 'job', S, 'in', D, 'ms'],
    expected: 'worker <*> finished job <*> in <*> ms',
  },
  {
    parts: ['disk', 'full', 'on', (r) => p(PARAM_TYPE.STR, `/dev/sd${word(r, 1, 1)}${int(r, 1, 9)}`)],
    expected: 'disk full on <*>',
  },
  { parts: ['session', 'closed', 'for', S], expected: 'session closed for <*>' },
  { parts: ['scheduler', 'tick'], expected: 'scheduler tick' },
  {
    parts: [
      'payment',
      'of',
      (r) => p(PARAM_TYPE.NUM, `${int(r, 1, 999)}.${int(r, 10, 99)}`),
      'USD',
      'authorized',
      'for',
      'account',
      D,
      'at',
      (r) => p(PARAM_TYPE.TS, `2024-0${int(r, 1, 9)}-1${int(r, 0, 9)}T0${int(r, 0, 9)}:1${int(r, 0, 9)}:00Z`),
    ],
    expected: 'payment of <*> USD authorized for account <*> at <*>',
  },
];

/** `perTemplate` instances of every corpus template, interleaved deterministically by a seeded shuffle. */
export function corpus(perTemplate: number, seed = 42): CorpusLine[] {
  const rnd = prng(seed);
  const order: number[] = [];
  for (let t = 0; t < CORPUS_TEMPLATES.length; t++) for (let i = 0; i < perTemplate; i++) order.push(t);
  for (let i = order.length - 1; i > 0; i--) {
    const j = int(rnd, 0, i);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order.map((templateIndex) => {
    const spec = CORPUS_TEMPLATES[templateIndex];
    if (spec === undefined) throw new Error('unreachable');
    const tokens: string[] = [];
    const params: Param[] = [];
    for (const part of spec.parts) {
      if (typeof part === 'string') tokens.push(part);
      else {
        const param = part(rnd);
        tokens.push(param.value);
        params.push(param);
      }
    }
    return { templateIndex, line: tokens.join(' '), params };
  });
}
