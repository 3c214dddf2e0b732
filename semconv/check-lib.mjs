// The semconv check as an importable function, so tests can run it against a temporary tree.
//
// `checkSemconv(rootDir)` fails (ok: false) when:
//   1. the registry (semconv/registry/*.yaml) is invalid;
//   2. packages/telemetry/src/semconv.ts or the SEMCONV_EXPORTS block of its index.ts differs from what the
//      registry generates (someone edited the registry without `node semconv/generate.mjs`, or edited the output);
//   3. any TypeScript file under packages/, apps/ or test/ (node_modules, dist and semconv.ts excluded) holds a
//      string literal that is a registry name or looks like one (`sluice.<segment>.<segment>…`), or a template
//      literal that builds one — code must use the generated constants. Strings listed in
//      semconv/registry/non-telemetry.yaml (format identifiers and the like) are exempt.
// Metrics whose constant no scanned file references are reported as notes, not failures (the querier's metrics
// are declared before the querier exists).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { loadRegistry, renderIndexBlock, renderSemconvTs, replaceIndexBlock, semconvPaths } from './generate-lib.mjs';

/** Top-level directories scanned for inline names. */
export const SCANNED_DIRS = ['packages', 'apps', 'test'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);
/** A literal that looks like a Sluice metric or attribute name: `sluice.` and at least two more segments. */
const LOOKS_LIKE_NAME = /^sluice\.[a-z0-9_]+\.[a-z0-9_.]+$/;
/** A template literal head that starts building such a name. */
const BUILDS_NAME = /^sluice\.[a-z0-9_]+\./;
/** Last segments that make a dotted literal a file name (`sluice.example.yaml`), not a metric name. */
const FILE_EXTENSIONS = new Set([
  'yaml',
  'yml',
  'json',
  'js',
  'mjs',
  'cjs',
  'ts',
  'mts',
  'cts',
  'txt',
  'md',
  'log',
  'parquet',
  'proto',
  'toml',
  'sh',
  'gz',
  'zst',
  'pem',
  'crt',
]);

function listTsFiles(dir, out) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) listTsFiles(p, out);
    else if (entry.isFile() && /\.[mc]?ts$/.test(entry.name)) out.push(p);
  }
  return out;
}

/**
 * Finds string literals in one TypeScript source that are, or look like, Sluice metric/attribute names.
 * Comments are not literals, so TSDoc may mention names freely.
 * @returns `{ findings: {line, text, message}[], identifiers: Set<string> }`
 */
export function scanSource(fileName, text, registryNames, allowed = new Set()) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const findings = [];
  const identifiers = new Set();
  const lineOf = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node) => {
    if (ts.isIdentifier(node)) identifiers.add(node.text);
    else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const v = node.text;
      const constant = registryNames.get(v);
      if (constant !== undefined) {
        findings.push({ line: lineOf(node), text: v, message: `inline registry name '${v}': use ${constant}` });
      } else if (LOOKS_LIKE_NAME.test(v) && !allowed.has(v) && !FILE_EXTENSIONS.has(v.slice(v.lastIndexOf('.') + 1))) {
        findings.push({
          line: lineOf(node),
          text: v,
          message: `inline name '${v}' looks like a Sluice metric/attribute: declare it in semconv/registry and use the generated constant`,
        });
      }
    } else if (ts.isTemplateHead(node) && BUILDS_NAME.test(node.text)) {
      findings.push({
        line: lineOf(node),
        text: node.text,
        message: `template literal builds a Sluice name from '${node.text}…': use a generated constant`,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { findings, identifiers };
}

/**
 * Runs every semconv check against the tree at `rootDir`.
 * @returns `{ ok, problems: string[], notes: string[] }` — `ok` is false iff `problems` is non-empty.
 */
export function checkSemconv(rootDir) {
  const paths = semconvPaths(rootDir);
  const { registry, problems } = loadRegistry(rootDir);
  const notes = [];
  if (registry === null) return { ok: false, problems, notes };

  const expected = renderSemconvTs(registry);
  const actual = existsSync(paths.generated) ? readFileSync(paths.generated, 'utf8') : null;
  if (actual === null) problems.push(`${rel(rootDir, paths.generated)} is missing: run node semconv/generate.mjs`);
  else if (actual !== expected)
    problems.push(`${rel(rootDir, paths.generated)} differs from the registry: run node semconv/generate.mjs`);

  const indexText = existsSync(paths.index) ? readFileSync(paths.index, 'utf8') : null;
  const regenerated = indexText === null ? null : replaceIndexBlock(indexText, renderIndexBlock(registry));
  if (regenerated === null) problems.push(`${rel(rootDir, paths.index)} lacks the SEMCONV_EXPORTS markers`);
  else if (regenerated !== indexText)
    problems.push(`${rel(rootDir, paths.index)} SEMCONV_EXPORTS block is stale: run node semconv/generate.mjs`);

  const registryNames = new Map();
  for (const a of registry.attributes) registryNames.set(a.name, a.constName);
  for (const m of registry.metrics) registryNames.set(m.name, m.constName);

  const allowed = new Set(registry.nonTelemetry);
  const used = new Set();
  const files = SCANNED_DIRS.flatMap((d) => listTsFiles(join(rootDir, d), []));
  for (const file of files.sort()) {
    if (file === paths.generated) continue;
    const { findings, identifiers } = scanSource(file, readFileSync(file, 'utf8'), registryNames, allowed);
    for (const f of findings) problems.push(`${rel(rootDir, file)}:${f.line}: ${f.message}`);
    // The index re-exports every constant, which is not a use.
    if (file !== paths.index) for (const id of identifiers) used.add(id);
  }
  const unused = registry.metrics.filter((m) => !used.has(m.constName)).map((m) => m.name);
  if (unused.length > 0) notes.push(`metrics declared but not yet referenced in code: ${unused.join(', ')}`);
  return { ok: problems.length === 0, problems, notes };
}

function rel(rootDir, p) {
  return relative(rootDir, p).split(sep).join('/');
}
