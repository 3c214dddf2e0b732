/**
 * @module @sluice/limits/testing
 * Test seams other packages' tests reuse: paused time for the admission gate, and a pause between a pool grow's
 * read and its commit.
 */
export { ManualTimers } from './manual-timers.js';
export { setAfterTotalCommitHook, setBeforeGrowCommitHook } from '../query-reservation.js';
