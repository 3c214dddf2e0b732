/**
 * Token documents: hashes only, every problem reported at once with its path, values never echoed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken } from './bearer.js';
import { loadTokenTable, parseTokenText } from './load-token-table.js';

const hex = (token: string): string => Buffer.from(hashToken(token)).toString('hex');

describe('token documents', () => {
  test('a YAML document becomes grants with hashes, tenant sets and surfaces', () => {
    const r = parseTokenText(
      `tokens:
  - name: collector-a
    sha256: ${hex('tok-a')}
    tenants: [team-a, team-b]
    surfaces: [ingest]
  - name: reader
    sha256: ${hex('tok-r').toUpperCase()}
    all_tenants: true
    surfaces: [query, mcp, admin]
`,
      'auth.tokens_file',
    );
    assert.ok(r.ok, JSON.stringify(r));
    const [a, reader] = r.value.grants;
    assert.equal(a!.name, 'collector-a');
    assert.deepEqual(Buffer.from(a!.sha256), Buffer.from(hashToken('tok-a')));
    assert.deepEqual([...(a!.tenants as Set<string>)], ['team-a', 'team-b']);
    assert.deepEqual([...a!.surfaces], ['ingest']);
    assert.equal(reader!.tenants, 'all');
    assert.deepEqual(Buffer.from(reader!.sha256), Buffer.from(hashToken('tok-r')), 'hex is case-insensitive');
  });

  test('the inline JSON form (env-only mode) is the same document', () => {
    const r = parseTokenText(
      JSON.stringify({ tokens: [{ name: 'x', sha256: hex('t'), tenants: ['a'], surfaces: ['query'] }] }),
      'auth.tokens',
    );
    assert.ok(r.ok);
    assert.equal(r.value.grants.length, 1);
  });

  test('every problem is reported at once, under the key that supplied the document', () => {
    const r = parseTokenText(
      JSON.stringify({
        tokens: [
          { name: 'ok', sha256: hex('1'), tenants: ['a'], surfaces: ['ingest'] },
          { name: 'bad name!', sha256: 'not-a-hash', tenants: [], surfaces: ['ingest', 'root'] },
          { name: 'plain', token: 'hunter2', tenants: ['a:b'], all_tenants: 'yes', surfaces: [] },
          { name: 'ok', sha256: hex('1'), all_tenants: true, surfaces: ['query'] },
        ],
        extra: 1,
      }),
      'auth.tokens',
    );
    assert.ok(!r.ok);
    const messages = r.error.map((i) => i.message);
    assert.ok(r.error.every((i) => i.path === 'auth.tokens'));
    const expect = [
      /^extra: unknown key/,
      /^tokens\[1\]\.name: must be 1-64 characters/,
      /^tokens\[1\]\.sha256: must be 64 hexadecimal characters/,
      /^tokens\[1\]\.tenants: must be a non-empty list/,
      /^tokens\[1\]\.surfaces\[1\]: must be one of ingest, query, mcp, admin/,
      /^tokens\[2\]\.token: tokens are never stored in plain text; give sha256/,
      /^tokens\[2\]\.sha256: must be 64 hexadecimal characters/,
      /^tokens\[2\]\.all_tenants: must be true or false/,
      /^tokens\[2\]\.surfaces: must be a non-empty list/,
      /^tokens\[3\]\.sha256: the same token as tokens\[0\]/,
      /^tokens\[3\]\.name: already used by tokens\[0\]/,
    ];
    for (const re of expect)
      assert.ok(
        messages.some((m) => re.test(m)),
        `${re} in\n${messages.join('\n')}`,
      );
    assert.ok(!messages.join('\n').includes('hunter2'), 'a plaintext token is never echoed');
    assert.ok(!messages.join('\n').includes('not-a-hash'), 'a bad hash value is never echoed');
  });

  test('an empty token list is refused: auth with no token would refuse everything', () => {
    const r = parseTokenText('tokens: []', 'auth.tokens');
    assert.ok(!r.ok);
    assert.match(r.error[0]!.message, /^tokens: must be a non-empty list/);
  });

  test('YAML syntax errors are reported in our words with a position', () => {
    const r = parseTokenText('tokens:\n  - name: [unclosed\n', 'auth.tokens_file');
    assert.ok(!r.ok);
    assert.match(r.error[0]!.message, /^the token document is not valid YAML or JSON at line \d+, column \d+$/);
  });

  test('the file form reads the file; an unreadable file is one issue naming auth.tokens_file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tokens-'));
    const file = join(dir, 'tokens.yaml');
    writeFileSync(file, `tokens:\n  - { name: a, sha256: ${hex('x')}, tenants: [a], surfaces: [ingest] }\n`);
    const ok = await loadTokenTable({ kind: 'file', path: file });
    assert.ok(ok.ok);
    const missing = await loadTokenTable({ kind: 'file', path: join(dir, 'nope.yaml') });
    assert.ok(!missing.ok);
    assert.deepEqual(missing.error, [
      { path: 'auth.tokens_file', message: `${JSON.stringify(join(dir, 'nope.yaml'))}: no such file` },
    ]);
  });
});
