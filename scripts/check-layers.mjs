#!/usr/bin/env node
// Fails when a workspace depends on a @sluice package of the same or a higher layer, or when a package's
// tsconfig references do not mirror its @sluice dependencies. Layers only point down: core (0) ← otlp,
// config, telemetry, miner, limits, edge, query (1) ← wal, storage (2) ← engine, compaction, sink (3) ←
// receiver, querier, compactor (4) ← server (5)
// ← test (6).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const LAYER = {
  '@sluice/core': 0,
  '@sluice/otlp': 1,
  '@sluice/config': 1,
  '@sluice/telemetry': 1,
  '@sluice/miner': 1,
  '@sluice/limits': 1,
  '@sluice/edge': 1,
  '@sluice/wal': 2,
  '@sluice/storage': 2,
  '@sluice/query': 1,
  '@sluice/engine': 3,
  '@sluice/compaction': 3,
  '@sluice/sink': 3,
  '@sluice/receiver': 4,
  '@sluice/querier': 4,
  '@sluice/compactor': 4,
  '@sluice/server': 5,
  '@sluice/e2e': 6,
};
const root = JSON.parse(readFileSync('package.json', 'utf8'));
const problems = [];
for (const dir of root.workspaces) {
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
  const mine = LAYER[pkg.name];
  if (mine === undefined) {
    problems.push(`${pkg.name}: no layer assigned in scripts/check-layers.mjs`);
    continue;
  }
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => d.startsWith('@sluice/'));
  for (const d of deps) {
    if (LAYER[d] === undefined) problems.push(`${pkg.name} depends on unknown ${d}`);
    else if (LAYER[d] >= mine) problems.push(`${pkg.name} (layer ${mine}) depends on ${d} (layer ${LAYER[d]})`);
  }
  const ts = JSON.parse(readFileSync(`${dir}/tsconfig.json`, 'utf8'));
  const refs = new Set((ts.references ?? []).map((r) => join(dir, r.path)));
  for (const d of deps) {
    const target = root.workspaces.find((w) => JSON.parse(readFileSync(`${w}/package.json`, 'utf8')).name === d);
    if (target && !refs.has(target)) problems.push(`${dir}/tsconfig.json lacks a reference to ${target}`);
  }
}
if (problems.length) {
  console.error('check-layers:\n  ' + problems.join('\n  '));
  process.exit(1);
}
console.log(`check-layers: ${root.workspaces.length} workspaces OK`);
