/**
 * @module @sluice/limits/testing
 * Test seams other packages' tests reuse: paused time for the admission gate, a pause between a pool grow's
 * read and its commit, and cgroup/meminfo fixture trees for a memory source.
 */
export { ManualTimers } from './manual-timers.js';
export { setAfterTotalCommitHook, setBeforeGrowCommitHook } from '../query-reservation.js';
export type { CgroupFixture } from './cgroup-fixture.js';
export { cgroupFixture, meminfo } from './cgroup-fixture.js';
