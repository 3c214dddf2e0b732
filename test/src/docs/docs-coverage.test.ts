/**
 * Keeps the operator docs honest (docs/*.md). It fails when:
 *   (a) a config key of `configKeyReference()` is missing from docs/configuration.md (as `path` in backticks), or
 *       the generated key tables are stale: the test re-renders them with the generator's own exported functions
 *       (scripts/gen-config-doc.mjs) and compares;
 *   (b) an error kind the code can return is missing from docs/rejections.md, as the first column (in backticks)
 *       of a row in the table of its surface (the "Query" section for query kinds, the "Ingest" section for ingest
 *       outcomes); for the query limit kinds the row's HTTP status must also be `limitErrorStatus(kind)`;
 *   (c) a relative link in docs/*.md points at a file that does not exist, or at a heading anchor that a docs page
 *       does not have.
 *
 * COUPLING TO SOURCE TEXT (deliberate): the querier's and the receiver's kinds are not importable here without
 * building those apps, so they are parsed out of their source files as text:
 *   - apps/querier/src/query-error.ts: the string literals of the `export type QueryErrorKind = … ;` union (the
 *     `LimitErrorKind` member comes from `LIMIT_ERROR_KINDS` of @sluice/limits instead);
 *   - apps/receiver/src/ingest-outcome.ts: every `status: '…'` literal (the `IngestOutcome` union's tags).
 * If either file is reshaped so the regex finds nothing (or loses a kind known to exist), the sanity asserts
 * below fail loudly rather than letting the coverage check pass vacuously. Update the regex with the refactor.
 *
 * Paths: this file runs from test/dist/docs/, so the repository root is three levels up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configKeyReference } from '@sluice/config';
import type { ConfigKeyInfo } from '@sluice/config';
import { LIMIT_ERROR_KINDS, limitErrorStatus } from '@sluice/limits';
import type { LimitErrorKind } from '@sluice/limits';

const ROOT_URL = new URL('../../../', import.meta.url);
const ROOT = fileURLToPath(ROOT_URL);
const DOCS = join(ROOT, 'docs');

/** The functions scripts/gen-config-doc.mjs exports (it is plain ESM, so it is typed here). */
interface ConfigDocGenerator {
  renderConfigDoc(text: string, keys: readonly ConfigKeyInfo[]): { text: string; missing: string[] };
  CONFIG_DOC_PATH: string;
}

function read(relative: string): string {
  return readFileSync(join(ROOT, relative), 'utf8');
}

async function loadGenerator(): Promise<ConfigDocGenerator> {
  return (await import(new URL('scripts/gen-config-doc.mjs', ROOT_URL).href)) as ConfigDocGenerator;
}

// ---------------------------------------------------------------------------------------------------------------
// (a) configuration.md

/** Keys whose `path` never appears in backticks in `doc`. */
export function missingConfigKeys(doc: string, keys: readonly ConfigKeyInfo[]): string[] {
  return keys.filter((k) => !doc.includes(`\`${k.path}\``)).map((k) => k.path);
}

test('root: the repository root resolves from test/dist/docs/', () => {
  assert.ok(existsSync(join(ROOT, 'package.json')), `no package.json at ${ROOT}`);
  assert.ok(
    existsSync(join(ROOT, 'test', 'src', 'docs', 'docs-coverage.test.ts')),
    `${ROOT} is not the repository root`,
  );
});

test('configuration.md documents every config key', () => {
  const keys = configKeyReference();
  assert.ok(keys.length > 0);
  const missing = missingConfigKeys(read('docs/configuration.md'), keys);
  assert.deepEqual(
    missing,
    [],
    `keys missing from docs/configuration.md (run node scripts/gen-config-doc.mjs): ${missing.join(', ')}`,
  );
});

test('configuration.md generated tables are up to date', async () => {
  const gen = await loadGenerator();
  const before = read(gen.CONFIG_DOC_PATH);
  const { text, missing } = gen.renderConfigDoc(before, configKeyReference());
  assert.deepEqual(missing, [], `sections without a generated block in docs/configuration.md: ${missing.join(', ')}`);
  assert.ok(
    text === before,
    'docs/configuration.md is stale: run `npx tsc -b packages/config && node scripts/gen-config-doc.mjs`',
  );
});

test('self-check: a key removed from the doc, or a stale table, is detected', async () => {
  const keys = configKeyReference();
  const doc = read('docs/configuration.md');
  const victim = keys.find((k) => k.path === 'querier.limits.max_files') ?? keys[0];
  assert.ok(victim !== undefined);
  const mutated = doc
    .split('\n')
    .filter((line) => !line.includes(`\`${victim.path}\``))
    .join('\n');
  assert.deepEqual(missingConfigKeys(mutated, keys), [victim.path]);
  const gen = await loadGenerator();
  assert.notEqual(gen.renderConfigDoc(mutated, keys).text, mutated, 'the generator must restore a removed row');
});

// ---------------------------------------------------------------------------------------------------------------
// (b) rejections.md

/** The string literals of the `QueryErrorKind` union in apps/querier/src/query-error.ts. */
export function queryErrorKindsFromSource(source: string): string[] {
  const union = /export\s+type\s+QueryErrorKind\s*=([^;]*);/.exec(source);
  if (union?.[1] === undefined) return [];
  return [...union[1].matchAll(/'([a-z_]+)'/g)].map((m) => m[1] ?? '');
}

/** The `status: '…'` literals of `IngestOutcome` in apps/receiver/src/ingest-outcome.ts. */
export function ingestOutcomeKindsFromSource(source: string): string[] {
  return [...new Set([...source.matchAll(/status:\s*'([a-z_]+)'/g)].map((m) => m[1] ?? ''))];
}

/** The `## ` section of `doc` whose heading starts with `prefix` (up to the next `## `). */
function section(doc: string, prefix: string): string {
  const parts = doc.split(/^(?=## )/m);
  return parts.find((p) => p.startsWith(`## ${prefix}`)) ?? '';
}

/** Table rows of `text` keyed by the backticked token in their first column: kind → cells. */
export function tableRowsByKind(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^\|\s*`([a-z_]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined)
      rows.set(
        m[1],
        m[2].split('|').map((c) => c.trim()),
      );
  }
  return rows;
}

const queryKinds = (): string[] => {
  const fromSource = queryErrorKindsFromSource(read('apps/querier/src/query-error.ts'));
  // Sanity: the regex still understands the file (see the coupling note at the top).
  for (const known of ['missing_tenant', 'invalid_query', 'internal']) {
    assert.ok(
      fromSource.includes(known),
      `could not parse QueryErrorKind from apps/querier/src/query-error.ts (lost '${known}'); update the regex`,
    );
  }
  return [...new Set([...fromSource, ...LIMIT_ERROR_KINDS])];
};

const ingestKinds = (): string[] => {
  const fromSource = ingestOutcomeKindsFromSource(read('apps/receiver/src/ingest-outcome.ts'));
  for (const known of ['accepted', 'invalid', 'unavailable']) {
    assert.ok(
      fromSource.includes(known),
      `could not parse IngestOutcome from apps/receiver/src/ingest-outcome.ts (lost '${known}'); update the regex`,
    );
  }
  return fromSource;
};

test('rejections.md lists every query error kind in the query table', () => {
  const table = tableRowsByKind(section(read('docs/rejections.md'), 'Query'));
  const missing = queryKinds().filter((k) => !table.has(k));
  assert.deepEqual(
    missing,
    [],
    `query error kinds missing from the "Query" table of docs/rejections.md: ${missing.join(', ')}`,
  );
});

test('rejections.md lists every ingest outcome in the ingest table', () => {
  const table = tableRowsByKind(section(read('docs/rejections.md'), 'Ingest'));
  const missing = ingestKinds().filter((k) => !table.has(k));
  assert.deepEqual(
    missing,
    [],
    `ingest outcomes missing from the "Ingest" table of docs/rejections.md: ${missing.join(', ')}`,
  );
});

test('rejections.md gives each query limit kind the status the code returns', () => {
  const table = tableRowsByKind(section(read('docs/rejections.md'), 'Query'));
  for (const kind of LIMIT_ERROR_KINDS as readonly LimitErrorKind[]) {
    const http = table.get(kind)?.[0];
    assert.equal(
      http,
      String(limitErrorStatus(kind)),
      `docs/rejections.md: ${kind} must show HTTP ${limitErrorStatus(kind)}`,
    );
    const retryAfter = table.get(kind)?.[3];
    assert.equal(
      retryAfter,
      'no',
      `docs/rejections.md: ${kind} never carries Retry-After (docs/design/query-governance.md)`,
    );
  }
});

test('self-check: the kind parsers read the real union shapes', () => {
  assert.deepEqual(
    queryErrorKindsFromSource("export type QueryErrorKind =\n  | 'a_b'\n  | LimitErrorKind\n  | 'c';\nconst x = 'd';"),
    ['a_b', 'c'],
  );
  assert.deepEqual(ingestOutcomeKindsFromSource("| { readonly status: 'ok'; n: 1 }\n| { readonly status: 'bad' }"), [
    'ok',
    'bad',
  ]);
  assert.equal(tableRowsByKind('| `x_y` | 422 | −32600 |\n| x | 1 |').get('x_y')?.[0], '422');
});

// ---------------------------------------------------------------------------------------------------------------
// (c) links

/** GitHub's heading anchor: lower case, punctuation dropped (except `-` and `_`), spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of withoutFences(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m?.[1] !== undefined) anchors.add(slug(m[1]));
  }
  return anchors;
}

function withoutFences(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** Broken relative links of one docs page: `[text](target)` outside code fences. */
export function brokenLinks(page: string, markdown: string): string[] {
  const broken: string[] = [];
  const text = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [pathPart = '', anchor] = target.split('#', 2);
    const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
    if (!existsSync(file)) {
      broken.push(`${target} (no such file: ${file})`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && file.endsWith('.md') && file.startsWith(DOCS)) {
      if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${target} (no heading #${anchor})`);
    }
  }
  return broken;
}

test('every relative link in docs/*.md points to an existing file (and heading)', () => {
  const pages = readdirSync(DOCS).filter((f) => f.endsWith('.md'));
  for (const expected of ['configuration.md', 'rejections.md', 'deployment.md', 'quickstart.md']) {
    assert.ok(pages.includes(expected), `docs/${expected} is missing`);
  }
  const broken = pages.flatMap((name) =>
    brokenLinks(join(DOCS, name), readFileSync(join(DOCS, name), 'utf8')).map((b) => `docs/${name}: ${b}`),
  );
  assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
});

test('self-check: a broken link is detected', () => {
  const page = join(DOCS, 'quickstart.md');
  assert.equal(brokenLinks(page, '[x](no-such-file.md)').length, 1);
  assert.equal(brokenLinks(page, '[x](rejections.md#no-such-heading)').length, 1);
  assert.deepEqual(
    brokenLinks(page, '[x](rejections.md#query-v1query-and-mcp) [y](https://example.com) `[z](nope.md)`'),
    [],
  );
});
