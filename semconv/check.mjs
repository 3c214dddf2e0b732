#!/usr/bin/env node
// `npm run lint` step: fails when the registry is invalid, the generated TS is stale, or code hand-types a Sluice
// metric/attribute name. See check-lib.mjs for the rules; semconv/README.md for how to add a metric.
import { fileURLToPath } from 'node:url';
import { checkSemconv } from './check-lib.mjs';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const { ok, problems, notes } = checkSemconv(rootDir);
for (const n of notes) console.log(`semconv check: note: ${n}`);
if (!ok) {
  console.error('semconv check failed:\n  ' + problems.join('\n  '));
  process.exit(1);
}
console.log('semconv check: OK');
