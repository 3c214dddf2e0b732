/**
 * @module testing/faulty-storage-reads
 * The faulty-storage test worker announces every range read it starts on a BroadcastChannel, so a test with paused
 * time can fire a deadline only once the read it wants the query stopped in is under way (a cold worker on a loaded
 * machine may not have reached it by any fixed wall-clock deadline).
 */
import { BroadcastChannel } from 'node:worker_threads';

/** Name of the channel the faulty-storage worker announces its range reads on. */
export const FAULTY_READS_CHANNEL = 'sluice-test-faulty-storage-reads';

/** Listens for the worker's range-read announcements (the object key of each read started). */
export function listenForFaultyReads(): { readonly keys: readonly string[]; close(): void } {
  const keys: string[] = [];
  const channel = new BroadcastChannel(FAULTY_READS_CHANNEL);
  channel.onmessage = (event) => {
    keys.push(String((event as MessageEvent).data));
  };
  return {
    keys,
    close: () => channel.close(),
  };
}
