/**
 * @module @sluice/storage/testing
 * Test helpers for other packages: the object-store contract suite, an s3rver harness, realistic sample rows and a
 * fault-injecting store wrapper.
 * (The fast-check arbitraries stay internal: fast-check is only a dev dependency.)
 */
export type { ContractSubject } from './object-store-contract.js';
export { MANY_KEYS, runObjectStoreContract } from './object-store-contract.js';
export type { S3rverHandle } from './s3rver-harness.js';
export { startS3rver } from './s3rver-harness.js';
export { makeS3rverPutsWhole } from './s3rver-whole-puts.js';
export { prng, sampleRows } from './sample-rows.js';
export { createCasEnforcingStore } from './cas-enforcing-store.js';
export type { Fault, FaultController, FaultScope, FaultyCall } from './faulty-object-store.js';
export { createFaultyObjectStore } from './faulty-object-store.js';
