/**
 * @module read-manifest.test
 * Which manifests the compactor builds on and which it quarantines, with which reason, and which generation a
 * corrupt one still vouches for.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readManifest } from './read-manifest.js';

const read = (text: string) => readManifest(new TextEncoder().encode(text));
const summary = (text: string) => {
  const r = read(text);
  return r.status === 'ok' ? ['ok', r.manifest.generation] : [r.reason, r.generation];
};

void test('a valid manifest is read', () => {
  assert.deepEqual(summary('{"generation":4,"files":["0192.parquet"],"extra":true}'), ['ok', 4]);
});

void test('bytes that are not a manifest are manifest_invalid', () => {
  assert.deepEqual(summary(''), ['manifest_invalid', null]);
  assert.deepEqual(summary('{"generation": 1, "files": ['), ['manifest_invalid', null]);
  assert.deepEqual(summary('[1,2]'), ['manifest_invalid', null]);
  assert.deepEqual(summary('{"generation":"1","files":[]}'), ['manifest_invalid', null]);
  assert.deepEqual(summary('{"generation":2,"files":"a.parquet"}'), ['manifest_invalid', 2]);
  assert.deepEqual(summary('{"generation":2,"files":[7]}'), ['manifest_invalid', 2]);
  assert.deepEqual(summary('{"generation":2,"files":["a.parquet","a.parquet"]}'), ['manifest_invalid', 2]);
});

void test('a name that is not a bare partition-local .parquet file is manifest_foreign_name', () => {
  for (const name of ['../x.parquet', 'sub/x.parquet', 'x.csv', '/etc/passwd', 'X.parquet'])
    assert.deepEqual(summary(JSON.stringify({ generation: 3, files: ['a.parquet', name] })), [
      'manifest_foreign_name',
      3,
    ]);
});

void test('a generation the compactor cannot commit above is manifest_invalid, and not vouched for', () => {
  assert.deepEqual(summary(`{"generation":${Number.MAX_SAFE_INTEGER},"files":[]}`), ['manifest_invalid', null]);
  assert.deepEqual(summary(`{"generation":${Number.MAX_SAFE_INTEGER - 1},"files":[]}`), ['manifest_invalid', null]);
  assert.deepEqual(summary('{"generation":1e300,"files":[]}'), ['manifest_invalid', null]);
  assert.deepEqual(summary(`{"generation":${Number.MAX_SAFE_INTEGER - 2},"files":[]}`), [
    'ok',
    Number.MAX_SAFE_INTEGER - 2,
  ]);
});
