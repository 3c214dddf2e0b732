/**
 * @module @sluice/miner
 * Layer 1: the Drain-style online template miner (packages/miner/README.md). Depends only on `@sluice/core` and node
 * built-ins. See README.md for the zones, the bounded-memory argument and the determinism contract.
 */
export type { Miner, MineResult } from './miner.js';
export { createMiner, restoreMiner, AUDIT_SAMPLE_BYTES } from './miner.js';
export type { MinerOptions } from './options.js';
export { DEFAULT_MINER_OPTIONS, resolveMinerOptions } from './options.js';
export type { MinerStats, ParseFailureReason } from './miner-state.js';
export { PARSE_FAILURE_REASONS, MAX_SCOPE_KEY_BYTES } from './miner-state.js';
export type { TemplateInfo, TemplateKind } from './template.js';
export { renderTemplate } from './template.js';
export type { TokenizedLine } from './tokenizer.js';
export { tokenize } from './tokenizer.js';
export type { TokenClass } from './masker.js';
export { classifyToken, LITERAL, LITERAL_WITH_DIGIT, WILDCARD_TEXT } from './masker.js';
export { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, maxSnapshotBytes } from './snapshot.js';
