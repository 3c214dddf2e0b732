/**
 * @module testing/faulty-storage-query-worker
 * Test-only worker script: the real query worker over the local store with faults injected *under* the bounded,
 * retrying store (as a failing S3 endpoint would be), by tenant:
 * - `flaky`: every range read answers like an S3 503, so each read runs out of its 2 attempts;
 * - `stalled`: the first range read answers 503 (one retry is reported), the retry hangs until the query stops;
 * - `hung`: every range read hangs until the query stops, with no retry.
 * Faults are keyed by tenant, so other tenants read normally.
 */
import { createLocalObjectStore, createResilientObjectStore } from '@sluice/storage';
import { createFaultyObjectStore } from '@sluice/storage/testing';
import { BroadcastChannel } from 'node:worker_threads';
import { workerSeams } from '../worker-seams.js';
import { FAULTY_READS_CHANNEL } from './faulty-storage-reads.js';

/** Attempts per call in this worker (the bounded store's `maxAttempts`). */
export const FAULTY_MAX_ATTEMPTS = 2;

const of = (tenant: string) => (key: string) => key.includes(`tenant_id=${tenant}/`);

workerSeams.createStore = (settings, hooks) => {
  if (settings.backend !== 'local') throw new Error('faulty-storage-query-worker: local settings only');
  const { store, faults } = createFaultyObjectStore(createLocalObjectStore({ root: settings.root }));
  faults.inject('get_range', 'server_error', { key: of('flaky') });
  faults.inject('get_range', 'server_error', { key: of('stalled'), times: 1 });
  faults.inject('get_range', 'hang', { key: of('stalled') });
  faults.inject('get_range', 'hang', { key: of('hung') });
  // Each range read is announced as it starts (before its fault applies), for tests that fire a deadline only
  // once the read is under way.
  const announce = new BroadcastChannel(FAULTY_READS_CHANNEL);
  announce.unref();
  const announced = {
    ...store,
    getRange: (...args: Parameters<typeof store.getRange>) => {
      announce.postMessage(args[0]);
      return store.getRange(...args);
    },
  };
  return createResilientObjectStore(announced, {
    requestTimeoutMs: 0,
    maxAttempts: FAULTY_MAX_ATTEMPTS,
    retryBaseMs: 0,
    retryMaxMs: 0,
    ...(hooks.onRetry ? { onRetry: hooks.onRetry } : {}),
  });
};
await import('../query-worker.js');
