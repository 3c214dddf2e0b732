#!/usr/bin/env node
// Runs every compiled test file (`**/dist/**/*.test.js` in the workspaces) with node's built-in runner.
// Listing the files explicitly keeps a run that finds no test visible (it fails below) on Node 20, whose
// `--test` has no glob support.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = ['packages', 'apps'];
/** A compiled test whose source was moved or deleted is stale output (tsc -b never removes it): skip it. */
function hasSource(compiled) {
  return existsSync(compiled.replace(`${'/'}dist${'/'}`, `${'/'}src${'/'}`).replace(/\.js$/, '.ts'));
}
const files = [];
function walk(dir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js') && p.includes(`${'/'}dist${'/'}`) && hasSource(p)) files.push(p);
  }
}
for (const r of roots) for (const pkg of readdirSync(r)) walk(join(r, pkg, 'dist'));
walk(join('test', 'dist'));
// The Helm chart tests and the lint checks' tests are plain ESM.
files.push(join('scripts', 'chart.test.mjs'), join('scripts', 'hygiene-checks.test.mjs'));
const filter = process.argv[2];
const selected = filter ? files.filter((f) => f.includes(filter)) : files;
if (selected.length === 0) {
  console.error('run-tests: no test files found (did the build run?)');
  process.exit(1);
}
const concurrency = process.env.SLUICE_TEST_CONCURRENCY ?? '2';
// A hung test fails after 10 minutes instead of holding the whole run (the longest legit test is ~2 minutes).
const timeoutMs = process.env.SLUICE_TEST_TIMEOUT_MS ?? '600000';
const r = spawnSync(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeoutMs}`,
    '--test-reporter=spec',
    ...selected.sort(),
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --openssl-legacy-provider`.trim() },
  },
);
process.exit(r.status ?? 1);
