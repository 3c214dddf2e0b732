// The repository lint checks (check-deps.mjs, check-layers.mjs, check-docs.mjs), run against a small throw-away
// repository: each rule fails on the case it exists for, and a tidy tree passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const scripts = dirname(fileURLToPath(import.meta.url));

/** Writes `files` (path → text or JSON value) into a fresh directory and returns it. */
function repo(files) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-hygiene-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

function run(script, dir) {
  const r = spawnSync(process.execPath, [join(scripts, script)], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

/** A two-package repository: core (layer 0) and otlp (layer 1, depending on core), tidy unless overridden. */
function tidy(overrides = {}) {
  return {
    'package.json': {
      name: 'sluice',
      private: true,
      workspaces: ['packages/core', 'packages/otlp'],
      // The tools check-deps.mjs knows are used without an import at the root.
      devDependencies: {
        '@aws-cdk/lambda-layer-kubectl-v33': '2.2.2',
        '@types/node': '20',
        eslint: '9',
        prettier: '3',
      },
    },
    'packages/core/package.json': { name: '@sluice/core', devDependencies: { 'fast-check': '4.11.0' } },
    'packages/core/tsconfig.json': { references: [] },
    'packages/core/src/index.ts': 'export const x = 1;\n',
    'packages/core/src/x.test.ts': "import fc from 'fast-check';\nvoid fc;\n",
    'packages/otlp/package.json': {
      name: '@sluice/otlp',
      dependencies: { '@sluice/core': '0.1.0', zod: '4.6.7' },
      devDependencies: { 'fast-check': '4.11.0' },
    },
    'packages/otlp/tsconfig.json': { references: [{ path: '../core' }] },
    'packages/otlp/src/index.ts':
      "import { x } from '@sluice/core';\nimport { z } from 'zod';\nimport type fc from 'fast-check';\nexport const y: fc.Arbitrary<number> | number = x;\nvoid z;\n",
    'packages/otlp/src/testing/arb.ts': "import fc from 'fast-check';\nexport const a = fc.nat();\n",
    ...overrides,
  };
}

test('a tidy repository passes all three checks', () => {
  const dir = repo(tidy());
  try {
    for (const script of ['check-deps.mjs', 'check-layers.mjs', 'check-docs.mjs']) {
      const r = run(script, dir);
      assert.equal(r.status, 0, r.out);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check-deps fails on an undeclared import, a devDependency in shipped code, and an unused dependency', () => {
  const cases = [
    [
      { 'packages/core/src/y.ts': "export { parse } from 'yaml';\n" },
      /packages\/core\/src\/y\.ts imports yaml, which is not declared/,
    ],
    [
      { 'packages/otlp/src/run.ts': "const fc = await import('fast-check');\nvoid fc;\n" },
      /packages\/otlp\/src\/run\.ts ships but imports the devDependency fast-check/,
    ],
    [
      {
        'packages/otlp/src/index.ts':
          "import { x } from '@sluice/core';\nimport type fc from 'fast-check';\nexport const y: fc.Arbitrary<number> | number = x;\n",
      },
      /zod is declared but never imported/,
    ],
  ];
  for (const [override, expected] of cases) {
    const dir = repo(tidy(override));
    try {
      const r = run('check-deps.mjs', dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('check-layers fails on an undeclared cross-layer import, an upward dependency and a missing reference', () => {
  const cases = [
    [
      { 'packages/core/src/up.ts': "import { y } from '@sluice/otlp';\nexport const z = y;\n" },
      /@sluice\/core \(layer 0\) imports \(packages\/core\/src\/up\.ts\) @sluice\/otlp \(layer 1\)[\s\S]*undeclared in packages\/core\/package\.json/,
    ],
    [
      { 'packages/core/package.json': { name: '@sluice/core', dependencies: { '@sluice/otlp': '0.1.0' } } },
      /@sluice\/core \(layer 0\) depends on @sluice\/otlp \(layer 1\)/,
    ],
    [{ 'packages/otlp/tsconfig.json': { references: [] } }, /packages\/otlp\/tsconfig\.json lacks a reference/],
  ];
  for (const [override, expected] of cases) {
    const dir = repo(tidy(override));
    try {
      const r = run('check-layers.mjs', dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('check-docs fails on each kind of outside citation, a local path and a broken link, and allows scenario ids', () => {
  const cases = [
    ['// (RFC 0058 \u00a73.6)\n', /"RFC 0058": an internal RFC number/],
    ['// see DESIGN \u00a77\n', /"DESIGN": DESIGN is not in the repository/],
    ['// the shapes of \u00a71\n', /a section sign/],
    ['// (ourios-surface)\n', /reference system's notes/],
    ['// seed 003 says so\n', /a seed or reference document/],
    ["// as the reference's parser does\n", /the reference system is not in the repository/],
    ['// run: cd /work/main && npm test\n', /a local absolute path/],
  ];
  for (const [line, expected] of cases) {
    const dir = repo(tidy({ 'packages/core/src/cited.ts': `${line}export const c = 1;\n` }));
    try {
      const r = run('check-docs.mjs', dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, expected);
      assert.match(r.out, /packages\/core\/src\/cited\.ts:1:/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const links = repo(
    tidy({
      'docs/a.md': '# A\n\n## Second part\n\n[ok](b.md#the-heading) [ok](#second-part) [gone](c.md) [bad](b.md#nope)\n',
      'docs/b.md': '# The heading\n\nScenario RFC0058.4 and RFC 9110 \u00a715.6.4 are fine.\n',
    }),
  );
  try {
    const r = run('check-docs.mjs', links);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /docs\/a\.md: link c\.md: no such file/);
    assert.match(r.out, /docs\/a\.md: link b\.md#nope: no such heading/);
    assert.doesNotMatch(r.out, /the-heading|second-part|docs\/b\.md/);
  } finally {
    rmSync(links, { recursive: true, force: true });
  }
});

test('a folder named wal or data is checked wherever it is, except the run-time directories at the root', () => {
  const dir = repo(
    tidy({
      'packages/core/src/wal/x.ts': "import { parse } from 'yaml';\nexport const p = parse;\n",
      'packages/core/src/wal/README.md': '# Wal\n\nAs RFC 0058 says.\n',
      'packages/core/src/data/y.ts': '// run: cd /work/main && npm test\nexport const d = 1;\n',
      // The run-time data directories at the root hold no source: whatever is in them is not read.
      'wal/junk.md': '# Junk\n\nAs RFC 0058 says, see [gone](nowhere.md).\n',
      'data/junk.ts': "// DESIGN \u00a77\nimport 'left-pad';\n",
    }),
  );
  try {
    const deps = run('check-deps.mjs', dir);
    assert.equal(deps.status, 1, deps.out);
    assert.match(deps.out, /packages\/core\/src\/wal\/x\.ts imports yaml, which is not declared/);
    const docs = run('check-docs.mjs', dir);
    assert.equal(docs.status, 1, docs.out);
    assert.match(docs.out, /packages\/core\/src\/wal\/README\.md:3: "RFC 0058"/);
    assert.match(docs.out, /packages\/core\/src\/data\/y\.ts:1: .*a local absolute path/);
    assert.doesNotMatch(docs.out, /junk/);
    assert.doesNotMatch(deps.out, /junk|left-pad/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check-deps sees a plain require() call', () => {
  const dir = repo(tidy({ 'packages/core/src/legacy.cjs': "const yaml = require('yaml');\nmodule.exports = yaml;\n" }));
  try {
    const r = run('check-deps.mjs', dir);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /packages\/core\/src\/legacy\.cjs imports yaml, which is not declared/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
