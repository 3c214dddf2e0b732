#!/usr/bin/env node
// The `sluice` CLI entry point (kept as committed JS so the npm bin link works before the first build).
import { main } from '../dist/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
    // A role may already hold listeners open; a failed start must not leave a half-started process behind.
    process.exit(1);
  },
);
