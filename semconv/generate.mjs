#!/usr/bin/env node
// Regenerates packages/telemetry/src/semconv.ts and the SEMCONV_EXPORTS block of packages/telemetry/src/index.ts
// from semconv/registry/*.yaml. Usage (from anywhere): `node semconv/generate.mjs`. Exits 1 on registry problems.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadRegistry, renderIndexBlock, renderSemconvTs, replaceIndexBlock, semconvPaths } from './generate-lib.mjs';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const { registry, problems } = loadRegistry(rootDir);
if (registry === null || problems.length > 0) {
  console.error('semconv generate: registry problems:\n  ' + problems.join('\n  '));
  process.exit(1);
}
const paths = semconvPaths(rootDir);
writeFileSync(paths.generated, renderSemconvTs(registry));
const index = replaceIndexBlock(readFileSync(paths.index, 'utf8'), renderIndexBlock(registry));
if (index === null) {
  console.error(`semconv generate: ${paths.index} lacks the SEMCONV_EXPORTS markers`);
  process.exit(1);
}
writeFileSync(paths.index, index);
console.log(
  `semconv generate: ${registry.metrics.length} metrics, ${registry.attributes.length} attributes → ${paths.generated}`,
);
