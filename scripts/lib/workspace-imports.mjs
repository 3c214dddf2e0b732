// What every workspace really imports, read from its sources with the TypeScript parser (static imports and
// re-exports, `import()` and `require()` with a literal, `import x = require()`, `import('x')` types). Used by check-layers.mjs (the
// layer rule over real imports) and check-deps.mjs (declared vs imported dependencies).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
/** Skipped wherever they are: dependencies, build output, scratch space (as in .gitignore). */
const SKIP_DIRS = new Set(['node_modules', 'dist', '.tmp', '.git']);
/**
 * Skipped only at the repository root: the run-time data directories (`/data/`, `/wal/` in .gitignore). A folder of
 * the same name anywhere else (`packages/wal`, `apps/receiver/src/wal`) is source and is read.
 */
const SKIP_ROOT_DIRS = new Set(['data', 'wal']);
const BUILTINS = new Set(builtinModules);

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or null for relative/builtin ones. */
export function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return BUILTINS.has(name) ? null : name;
}

/**
 * True for files that only tests, benchmarks and tooling load (they may use devDependencies): `*.test.*`, anything
 * under `testing/`, `bench/` or `scripts/`, `test-support.*`, `*.d.ts`, and every file of the `test` workspace.
 */
export function isDevFile(workspace, file) {
  if (workspace === 'test' || workspace === '.') return true;
  const rel = relative(workspace, file).split('\\').join('/');
  return (
    /\.test\.[cm]?[jt]s$/.test(rel) ||
    /\.d\.ts$/.test(rel) ||
    /(^|\/)(testing|bench|scripts)\//.test(rel) ||
    /(^|\/)test-support\.[cm]?[jt]s$/.test(rel) ||
    /(^|\/)bench\.[cm]?[jt]s$/.test(rel)
  );
}

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name); // relative to the repository root, which is the working directory
    if (SKIP_DIRS.has(name) || SKIP_ROOT_DIRS.has(p)) continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (SOURCE.test(name)) out.push(p);
  }
  return out;
}

/**
 * The source files that belong to a workspace: everything under it except build output and dependencies. For the
 * root (`.`), its own tooling: `scripts/`, `semconv/` and the top-level config files.
 */
export function workspaceFiles(workspace) {
  if (workspace === '.') {
    const files = [...walk('scripts', []), ...walk('semconv', [])];
    for (const name of readdirSync('.')) if (SOURCE.test(name) && statSync(name).isFile()) files.push(name);
    return files;
  }
  return walk(workspace, []);
}

/** Every module specifier in one file: `{ specifier, typeOnly }` (typeOnly: erased at run time). */
export function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const kind =
    file.endsWith('.ts') || file.endsWith('.mts') || file.endsWith('.cts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const literal = (node) => (node !== undefined && ts.isStringLiteralLike(node) ? node.text : null);
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (spec !== null) found.push({ specifier: spec, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      const spec = literal(node.moduleSpecifier);
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((e) => e.isTypeOnly));
      if (spec !== null) found.push({ specifier: spec, typeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const spec = literal(node.moduleReference.expression);
      if (spec !== null) found.push({ specifier: spec, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require' && node.arguments.length === 1))
    ) {
      const spec = literal(node.arguments[0]);
      if (spec !== null) found.push({ specifier: spec, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const spec = literal(node.argument.literal);
      if (spec !== null) found.push({ specifier: spec, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The workspaces of the root package.json, with their manifests. */
export function readWorkspaces() {
  const root = JSON.parse(readFileSync('package.json', 'utf8'));
  return root.workspaces.map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }));
}

/**
 * Every package import of a workspace: `{ file, specifier, name, typeOnly, dev }` (relative and builtin imports
 * left out; `name` is the package).
 */
export function packageImports(workspace) {
  const out = [];
  for (const file of workspaceFiles(workspace)) {
    for (const { specifier, typeOnly } of importsOf(file)) {
      const name = packageOf(specifier);
      if (name !== null) out.push({ file, specifier, name, typeOnly, dev: isDevFile(workspace, file) });
    }
  }
  return out;
}
