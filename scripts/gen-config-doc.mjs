#!/usr/bin/env node
/**
 * Generates the key tables of docs/configuration.md from the config schema (`configKeyReference()` of
 * @sluice/config), one table per top-level section, between markers:
 *
 *   <!-- BEGIN GENERATED: <section> (scripts/gen-config-doc.mjs; do not edit by hand) -->
 *   ...
 *   <!-- END GENERATED: <section> -->
 *
 * Everything outside the markers is hand-written prose and is kept as is.
 *
 *   npx tsc -b packages/config && node scripts/gen-config-doc.mjs           # rewrite docs/configuration.md and the
 *                                                                           # key table of packages/config/README.md
 *   npx tsc -b packages/config && node scripts/gen-config-doc.mjs --check   # exit 1 when the file is stale
 *
 * The rendering functions are pure and exported (they take the key list as an argument), so
 * test/src/docs/docs-coverage.test.ts re-renders with the very same code and fails when the file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

/** docs/configuration.md, relative to the repository root. */
export const CONFIG_DOC_PATH = 'docs/configuration.md';

/** The marker lines of one section's generated block. */
export function beginMarker(section) {
  return `<!-- BEGIN GENERATED: ${section} (scripts/gen-config-doc.mjs; do not edit by hand) -->`;
}
export function endMarker(section) {
  return `<!-- END GENERATED: ${section} -->`;
}

/** The top-level section of a key path (`querier.limits.max_files` → `querier`). */
export function sectionOf(path) {
  return path.split('.')[0];
}

/** Top-level sections in schema order. */
export function sectionsOf(keys) {
  return [...new Set(keys.map((k) => sectionOf(k.path)))];
}

/** The unit of a key, from the unit suffix its name carries (every limit carries its unit in its name). */
export function unitOf(path) {
  const leaf = path.split('.').at(-1);
  if (leaf.endsWith('_bytes')) return 'bytes';
  if (leaf.endsWith('_ms')) return 'milliseconds';
  if (leaf.endsWith('_secs')) return 'seconds';
  if (leaf.endsWith('_fraction') || leaf.endsWith('_threshold')) return 'ratio';
  if (leaf.endsWith('_percent')) return 'percent';
  if (leaf.endsWith('_addr')) return 'host:port';
  if (leaf.endsWith('_endpoint') || leaf === 'endpoint') return 'URL';
  if (leaf.endsWith('_dir') || leaf === 'root') return 'path';
  if (
    leaf.startsWith('max_') ||
    leaf.endsWith('_rows') ||
    leaf.endsWith('_depth') ||
    leaf.endsWith('_children') ||
    leaf.endsWith('_limit')
  ) {
    return leaf.endsWith('_limit') && leaf.includes('byte') ? 'bytes' : 'count';
  }
  return '—';
}

function cell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function renderDefault(value) {
  if (value === null) return '(unset)';
  if (value === '') return "`''` (empty)";
  return `\`${String(value)}\``;
}

/** The Markdown table of one section's keys. */
export function renderSectionTable(keys, section) {
  const rows = keys
    .filter((k) => sectionOf(k.path) === section)
    .map(
      (k) =>
        `| \`${k.path}\` | ${renderDefault(k.defaultValue)} | ${unitOf(k.path)} | ${cell(k.constraint)} | \`${k.envName}\` | ${cell(k.description)}${k.secret ? ' **Credential: use `${env:NAME}`.**' : ''} |`,
    );
  return [
    '| Key | Default | Unit | Constraint | Env-only variable | Meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** One section's whole generated block, markers included. */
export function renderSectionBlock(keys, section) {
  return [beginMarker(section), renderSectionTable(keys, section), endMarker(section)].join('\n');
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces every section's generated block in `text`. Returns `{ text, missing }`: `missing` lists sections whose
 * markers are absent (a new top-level section needs a heading, prose and a marker pair written by hand).
 */
export function renderConfigDoc(text, keys) {
  let out = text;
  const missing = [];
  for (const section of sectionsOf(keys)) {
    const pattern = new RegExp(`${escapeRegExp(beginMarker(section))}[\\s\\S]*?${escapeRegExp(endMarker(section))}`);
    if (!pattern.test(out)) {
      missing.push(section);
      continue;
    }
    const block = renderSectionBlock(keys, section);
    out = out.replace(pattern, () => block);
  }
  return { text: out, missing };
}

async function main(argv) {
  const root = new URL('../', import.meta.url);
  const { configKeyReference } = await import(new URL('packages/config/dist/index.js', root).href);
  const docUrl = new URL(CONFIG_DOC_PATH, root);
  const before = await readFile(docUrl, 'utf8');
  const { text, missing } = renderConfigDoc(before, configKeyReference());
  if (missing.length > 0) {
    process.stderr.write(
      `gen-config-doc: no generated block for section(s) ${missing.join(', ')} in ${CONFIG_DOC_PATH}; add a heading, prose and\n` +
        missing.map((s) => `  ${beginMarker(s)}\n  ${endMarker(s)}`).join('\n') +
        '\n',
    );
    return 1;
  }
  if (argv.includes('--check')) {
    if (text !== before) {
      process.stderr.write(`gen-config-doc: ${CONFIG_DOC_PATH} is stale; run node scripts/gen-config-doc.mjs\n`);
      return 1;
    }
    return 0;
  }
  if (text !== before) await writeFile(docUrl, text);
  process.stdout.write(`gen-config-doc: ${CONFIG_DOC_PATH} ${text === before ? 'already up to date' : 'updated'}\n`);
  // The config package's README carries the same keys as one table (its own test checks it is current).
  const { renderKeyTable } = await import(new URL('packages/config/dist/index.js', root).href);
  const readmeUrl = new URL(CONFIG_README_PATH, root);
  const readme = await readFile(readmeUrl, 'utf8');
  const updated = replaceKeyTable(readme, renderKeyTable());
  if (updated === null) {
    process.stderr.write(
      `gen-config-doc: no key table (a line starting "${KEY_TABLE_HEADER}") in ${CONFIG_README_PATH}\n`,
    );
    return 1;
  }
  if (updated !== readme) await writeFile(readmeUrl, updated);
  process.stdout.write(
    `gen-config-doc: ${CONFIG_README_PATH} ${updated === readme ? 'already up to date' : 'updated'}\n`,
  );
  return 0;
}

/** The config package's README, relative to the repository root. */
export const CONFIG_README_PATH = 'packages/config/README.md';
/** The header row that starts the README's key table. */
export const KEY_TABLE_HEADER = '| Key | Env-only variable |';

/** `readme` with its key table (the header row and every table row after it) replaced by `table`; `null` if absent. */
export function replaceKeyTable(readme, table) {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.startsWith(KEY_TABLE_HEADER));
  if (start < 0) return null;
  let end = start;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  return [...lines.slice(0, start), ...table.split('\n'), ...lines.slice(end)].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
