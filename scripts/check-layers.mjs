#!/usr/bin/env node
// Fails when a workspace imports (in its sources, read by scripts/lib/workspace-imports.mjs) or declares a @sluice
// package of the same or a higher layer, imports a @sluice package its package.json does not declare, or when its
// tsconfig references do not mirror its @sluice dependencies exactly. Layers only point down:
//   core (0) ← otlp, config, telemetry, miner, limits, edge, query, console (1) ← wal, storage (2) ← engine, compaction,
//   sink (3) ← receiver, querier, compactor (4) ← server (5) ← test (6).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageImports, readWorkspaces } from './lib/workspace-imports.mjs';

const LAYER = {
  '@sluice/core': 0,
  '@sluice/otlp': 1,
  '@sluice/config': 1,
  '@sluice/telemetry': 1,
  '@sluice/miner': 1,
  '@sluice/limits': 1,
  '@sluice/edge': 1,
  '@sluice/query': 1,
  '@sluice/console': 1,
  '@sluice/wal': 2,
  '@sluice/storage': 2,
  '@sluice/engine': 3,
  '@sluice/compaction': 3,
  '@sluice/sink': 3,
  '@sluice/receiver': 4,
  '@sluice/querier': 4,
  '@sluice/compactor': 4,
  '@sluice/server': 5,
  '@sluice/e2e': 6,
};

const workspaces = readWorkspaces();
const dirOf = new Map(workspaces.map((w) => [w.pkg.name, w.dir]));
const problems = [];
for (const { dir, pkg } of workspaces) {
  const mine = LAYER[pkg.name];
  if (mine === undefined) {
    problems.push(`${pkg.name}: no layer assigned in scripts/check-layers.mjs`);
    continue;
  }
  const declared = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => d.startsWith('@sluice/'));
  const check = (dep, how) => {
    if (LAYER[dep] === undefined) problems.push(`${pkg.name} ${how} unknown ${dep}`);
    else if (LAYER[dep] >= mine) problems.push(`${pkg.name} (layer ${mine}) ${how} ${dep} (layer ${LAYER[dep]})`);
  };
  for (const d of declared) check(d, 'depends on');
  for (const imp of packageImports(dir)) {
    if (!imp.name.startsWith('@sluice/') || imp.name === pkg.name) continue;
    check(imp.name, `imports (${imp.file})`);
    if (!declared.includes(imp.name))
      problems.push(`${imp.file} imports ${imp.specifier}, undeclared in ${dir}/package.json`);
  }
  const ts = JSON.parse(readFileSync(`${dir}/tsconfig.json`, 'utf8'));
  const refs = new Set((ts.references ?? []).map((r) => join(dir, r.path)));
  const wanted = new Set(declared.map((d) => dirOf.get(d)).filter((d) => d !== undefined));
  for (const target of wanted)
    if (!refs.has(target)) problems.push(`${dir}/tsconfig.json lacks a reference to ${target}`);
  for (const ref of refs) {
    if (!wanted.has(ref))
      problems.push(`${dir}/tsconfig.json references ${ref}, which ${dir}/package.json does not declare`);
  }
}
if (problems.length) {
  console.error('check-layers:\n  ' + [...new Set(problems)].join('\n  '));
  process.exit(1);
}
console.log(`check-layers: ${workspaces.length} workspaces OK`);
