/**
 * @module @sluice/limits/testing
 * Test seams other packages' tests reuse: paused time for the admission gate.
 */
export { ManualTimers } from './manual-timers.js';
