/**
 * @module env-substitution.test
 * ${env:…} substitution rules on parsed trees.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { substituteEnvReferences } from './env-substitution.js';

describe('substituteEnvReferences', () => {
  test('replaces whole-value and embedded references, in nested mappings', () => {
    const r = substituteEnvReferences({ a: { b: '${env:X}', c: 's3://${env:X}/${env:Y:-p}' } }, { X: 'v' });
    assert.deepEqual(r.tree, { a: { b: 'v', c: 's3://v/p' } });
    assert.deepEqual(r.issues, []);
    assert.deepEqual([...r.referencedNames].sort(), ['X', 'Y']);
  });

  test('a missing variable without default is an issue naming the key path and the variable', () => {
    const r = substituteEnvReferences({ storage: { s3: { bucket: '${env:BUCKET}' } } }, {});
    assert.equal(r.issues.length, 1);
    assert.equal(r.issues[0]?.path, 'storage.s3.bucket');
    assert.match(r.issues[0]?.message ?? '', /environment variable BUCKET is not set/);
    assert.ok(r.unresolvedPaths.has('storage.s3.bucket'));
  });

  test('two missing variables in one value are both reported', () => {
    assert.equal(substituteEnvReferences({ k: '${env:A}-${env:B}' }, {}).issues.length, 2);
  });

  test('a set but empty variable without default substitutes as empty (unset)', () => {
    assert.deepEqual(substituteEnvReferences({ k: '${env:A}' }, { A: '' }).tree, { k: undefined });
  });

  test(':- default applies when unset or empty, and may itself be empty', () => {
    assert.deepEqual(substituteEnvReferences({ a: '${env:A:-d}', b: '${env:B:-d}', c: '${env:C:-}' }, { B: '' }).tree, {
      a: 'd',
      b: 'd',
      c: undefined,
    });
  });

  test('substitution is not recursive', () => {
    assert.deepEqual(substituteEnvReferences({ k: '${env:A}' }, { A: '${env:B}', B: 'no' }).tree, { k: '${env:B}' });
    assert.deepEqual(substituteEnvReferences({ k: '${env:A:-${env:B}' }, { B: 'no' }).tree, { k: '${env:B' });
  });

  test('$${ is a literal ${; a lone $ is kept', () => {
    assert.deepEqual(substituteEnvReferences({ k: 'a$${env:X}$b' }, {}).tree, { k: 'a${env:X}$b' });
  });

  test('a malformed reference is an issue at its key', () => {
    for (const bad of ['${1BAD}', '${HOME}', '${env:}', '${env:A', '${env:A-b}']) {
      const r = substituteEnvReferences({ k: bad }, {});
      assert.equal(r.issues.length, 1, bad);
      assert.match(r.issues[0]?.message ?? '', /malformed reference/, bad);
    }
  });

  test('keys are never substituted; null and empty values become unset', () => {
    const r = substituteEnvReferences({ '${env:K}': 'x', n: null, e: '' }, { K: 'boom' });
    assert.deepEqual(r.tree, { '${env:K}': 'x', n: undefined, e: undefined });
  });

  test('non-string scalars pass through unchanged', () => {
    assert.deepEqual(substituteEnvReferences({ a: 1, b: true, c: [1, '${env:X}'] }, { X: 'y' }).tree, {
      a: 1,
      b: true,
      c: [1, 'y'],
    });
  });
});
