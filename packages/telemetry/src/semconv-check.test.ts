/**
 * @module semconv-check.test
 * Runs the real `semconv/check-lib.mjs` against temporary trees: it must fail on hand-typed names and stale
 * generated code, and pass on a clean tree without false positives.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { METRIC_SLUICE_INGEST_RECORDS, ATTR_SLUICE_TENANT } from './semconv.js';

/** The repository root: this file runs from packages/telemetry/dist/. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface CheckResult {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly notes: readonly string[];
}
interface CheckLib {
  checkSemconv(rootDir: string): CheckResult;
}
interface GenerateLib {
  loadRegistry(rootDir: string): { registry: unknown; problems: string[] };
  renderSemconvTs(registry: unknown): string;
  renderIndexBlock(registry: unknown): string;
  EXPORTS_BEGIN: string;
  EXPORTS_END: string;
}

const checkLib = (await import(new URL('semconv/check-lib.mjs', `file://${REPO_ROOT}`).href)) as CheckLib;
const generateLib = (await import(new URL('semconv/generate-lib.mjs', `file://${REPO_ROOT}`).href)) as GenerateLib;

/** A minimal repository: the real registry, freshly generated semconv.ts and index.ts, and the given sources. */
function makeTree(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'sluice-semconv-'));
  cpSync(join(REPO_ROOT, 'semconv', 'registry'), join(root, 'semconv', 'registry'), { recursive: true });
  const { registry, problems } = generateLib.loadRegistry(root);
  assert.deepEqual(problems, []);
  const index = `${generateLib.EXPORTS_BEGIN}\n${generateLib.EXPORTS_END}\n`;
  const all: Record<string, string> = {
    'packages/telemetry/src/semconv.ts': generateLib.renderSemconvTs(registry),
    'packages/telemetry/src/index.ts': index.replace(
      `${generateLib.EXPORTS_BEGIN}\n${generateLib.EXPORTS_END}`,
      generateLib.renderIndexBlock(registry),
    ),
    ...files,
  };
  for (const [rel, text] of Object.entries(all)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  return root;
}

function withTree(files: Readonly<Record<string, string>>, body: (root: string, result: CheckResult) => void): void {
  const root = makeTree(files);
  try {
    body(root, checkLib.checkSemconv(root));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Names are spliced in from the constants so that this file itself stays clean for the check.
const CLEAN_SOURCE = [
  "import { METRIC_SLUICE_INGEST_RECORDS } from '@sluice/telemetry';",
  "import type { X } from '@sluice/core';",
  "const config = 'sluice.example.yaml';",
  `// comments may mention ${METRIC_SLUICE_INGEST_RECORDS} freely`,
  `/** and TSDoc too: \`${METRIC_SLUICE_INGEST_RECORDS}\` */`,
  "const service = 'sluice';",
  'export { METRIC_SLUICE_INGEST_RECORDS, config, service };',
].join('\n');

void test('semconv check passes on a clean tree: constants, package names, file names and comments are not flagged', () => {
  withTree({ 'packages/foo/src/clean.ts': CLEAN_SOURCE }, (_root, result) => {
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
  });
});

void test('semconv check fails on an inline metric name and reports file:line', () => {
  const bad = ['const a = 1;', '', `meter.createCounter('${METRIC_SLUICE_INGEST_RECORDS}');`].join('\n');
  withTree({ 'apps/bar/src/bad.ts': bad }, (_root, result) => {
    assert.equal(result.ok, false);
    assert.deepEqual(result.problems, [
      `apps/bar/src/bad.ts:3: inline registry name '${METRIC_SLUICE_INGEST_RECORDS}': use METRIC_SLUICE_INGEST_RECORDS`,
    ]);
  });
});

void test('semconv check fails on an unregistered sluice.* name, a two-segment attribute name and a built name', () => {
  const unregistered = ['sluice', 'made', 'up_metric'].join('.');
  const built = ['sluice', 'ingest', ''].join('.');
  const bad = [
    `const a = "${unregistered}";`,
    `const b = { [\`${ATTR_SLUICE_TENANT}\`]: 't' };`,
    `const c = \`${built}\${'records'}\`;`,
  ].join('\n');
  withTree({ 'test/src/bad.ts': bad }, (_root, result) => {
    assert.equal(result.ok, false);
    assert.equal(result.problems.length, 3, result.problems.join('\n'));
    assert.match(result.problems[0] ?? '', /^test\/src\/bad\.ts:1: inline name .* declare it in semconv\/registry/);
    assert.match(result.problems[1] ?? '', /^test\/src\/bad\.ts:2: inline registry name .*: use ATTR_SLUICE_TENANT$/);
    assert.match(result.problems[2] ?? '', /^test\/src\/bad\.ts:3: template literal builds a Sluice name/);
  });
});

void test('semconv check ignores dist and node_modules', () => {
  const bad = `export const n = '${METRIC_SLUICE_INGEST_RECORDS}';`;
  withTree({ 'packages/foo/dist/x.ts': bad, 'packages/foo/node_modules/y/z.ts': bad }, (_root, result) => {
    assert.deepEqual(result.problems, []);
  });
});

void test('semconv check fails when the committed semconv.ts or the index export block differs from the registry', () => {
  withTree({}, (root, clean) => {
    assert.equal(clean.ok, true);
    const generated = join(root, 'packages/telemetry/src/semconv.ts');
    writeFileSync(generated, readFileSync(generated, 'utf8').replace('METRICS = {', 'METRICS = { /* hand edit */'));
    const index = join(root, 'packages/telemetry/src/index.ts');
    writeFileSync(index, readFileSync(index, 'utf8').replace('  METRICS,\n', ''));
    const result = checkLib.checkSemconv(root);
    assert.equal(result.ok, false);
    assert.deepEqual(result.problems, [
      'packages/telemetry/src/semconv.ts differs from the registry: run node semconv/generate.mjs',
      'packages/telemetry/src/index.ts SEMCONV_EXPORTS block is stale: run node semconv/generate.mjs',
    ]);
  });
});

void test('semconv check rejects registry entries that break the naming rules', () => {
  withTree({}, (root) => {
    const metrics = join(root, 'semconv/registry/metrics.yaml');
    const extra = [
      '  - name: sluice.bad.requests_total',
      '    instrument: counter',
      '    unit: "{request}"',
      '    description: x',
      '  - name: sluice.bad.duration',
      '    instrument: histogram',
      '    unit: ms',
      '    description: x',
      '    attributes: [sluice.undeclared]',
      '',
    ].join('\n');
    writeFileSync(metrics, readFileSync(metrics, 'utf8') + extra);
    const result = checkLib.checkSemconv(root);
    assert.equal(result.ok, false);
    const text = result.problems.join('\n');
    assert.match(text, /sluice\.bad\.requests_total: must not end in "total"/);
    assert.match(text, /sluice\.bad\.duration: unit must be UCUM/);
    assert.match(text, /sluice\.bad\.duration: attribute "sluice\.undeclared" is not declared/);
  });
});

void test('semconv check exempts strings listed in non-telemetry.yaml, and only those', () => {
  const formatId = ['sluice', 'thing', 'format'].join('.');
  const other = ['sluice', 'thing', 'other'].join('.');
  withTree(
    { 'packages/foo/src/format.ts': `export const F = '${formatId}';\nexport const G = '${other}';\n` },
    (root) => {
      writeFileSync(
        join(root, 'semconv/registry/non-telemetry.yaml'),
        `non_telemetry:\n  - value: ${formatId}\n    reason: a file format identifier\n`,
      );
      const result = checkLib.checkSemconv(root);
      assert.equal(result.problems.length, 1, result.problems.join('\n'));
      assert.match(result.problems[0] ?? '', /^packages\/foo\/src\/format\.ts:2: inline name 'sluice\.thing\.other'/);
    },
  );
});

void test('semconv check notes metrics no code references, without failing', () => {
  withTree({ 'packages/foo/src/clean.ts': CLEAN_SOURCE }, (_root, result) => {
    assert.equal(result.ok, true);
    const note = result.notes.join('\n');
    assert.match(note, /not yet referenced/);
    assert.doesNotMatch(note, new RegExp(`\\b${METRIC_SLUICE_INGEST_RECORDS.replace(/\./g, '\\.')}\\b`));
  });
});
