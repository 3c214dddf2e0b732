/**
 * @module pool-layout
 * The memory pool's `SharedArrayBuffer` layout. Every counter is a 64-bit word of one `BigInt64Array`, changed only
 * with `Atomics`, so the main thread and every worker see one pool. Byte counts are exact integers up to 2^53 on
 * the JavaScript side (`Number.isSafeInteger`) and 2^63 in the buffer, so pools of many GiB are exact.
 *
 * ```
 * word 0  MAGIC      layout tag and version (checked by attach)
 * word 1  SIZE       pool size in bytes (fixed at creation)
 * word 2  RESERVED   bytes reserved by all queries together (CAS loop in tryGrow)
 * word 3  SLOTS      number of query slots
 * word 4  TICKET     last slot ticket handed out (Atomics.add; tickets are never reused)
 * word 5  PEAK       the highest RESERVED since creation (a CAS max after each successful grow)
 * word 8 + i*8 …     slot i: OWNER, HELD, PEAK, THREAD, ID_LEN, GUARD (2 words spare)
 * after the words    slot i's query id, UTF-8, ID_BYTES bytes per slot
 * ```
 *
 * A slot's OWNER is 0 when free, {@link OWNER_BUSY} while it is being claimed or released, and a positive ticket
 * while a query holds it. The query id bytes are written before the ticket is published with `Atomics.store`, so
 * a reader that sees the ticket sees the id.
 *
 * A slot's GUARD makes its two-word updates (the total and the slot's held bytes) safe against a thread being
 * terminated between them: the owning thread enters with a compare-and-swap 0 → {@link GUARD_BUSY} and leaves
 * with 0; a thread about to be terminated is first *fenced*: the main thread swaps 0 → {@link fenceMark}(ticket) on
 * each of its slots (retrying while one is busy), after which the thread can no longer start an update, so terminating
 * it can never leave the total and the slots disagreeing. A thread that dies on its own inside an update (a V8 heap
 * exhausted by an allocation between the two words) can still leave them apart; after such a death the main
 * thread *repairs* the total: it pauses every slot ({@link GUARD_PAUSED}; an owning thread waits instead of
 * entering), sets the total to the sum of the slots, and unpauses.
 */

/** Layout tag: "SLUI" and layout version 3 (slot word GUARD, header word PEAK). */
export const POOL_MAGIC = 0x534c5549_0003n;
export const H_MAGIC = 0;
export const H_SIZE = 1;
export const H_RESERVED = 2;
export const H_SLOTS = 3;
export const H_TICKET = 4;
export const H_PEAK = 5;
export const HEADER_WORDS = 8;

export const S_OWNER = 0;
export const S_HELD = 1;
export const S_PEAK = 2;
export const S_THREAD = 3;
export const S_ID_LEN = 4;
export const S_GUARD = 5;
/**
 * The query group a slot belongs to (docs/design/query-governance.md, "Parallel scans"): the ticket of the group's
 * leading slot, or 0 for a slot that shares nothing. Slots of one group are one query: their held bytes are summed
 * for its ceiling and for the 422/503 rule.
 */
export const S_GROUP = 6;
/** The most this slot saw its group hold at once (its own grows, summed with the other members at that moment). */
export const S_GROUP_PEAK = 7;
export const SLOT_WORDS = 8;

/** GUARD: the owning thread is inside an update of the total and the slot. */
export const GUARD_BUSY = 1n;
/**
 * GUARD of a slot whose owner (the holder of `ticket`) is being stopped: it may not start another update. The mark
 * names the ticket, so a fence that lands just after its slot was released and claimed again is recognised as
 * stale by the new owner, which clears it.
 */
export function fenceMark(ticket: bigint): bigint {
  return -ticket;
}
/** GUARD: the main thread is repairing the total; the owning thread waits before it starts an update. */
export const GUARD_PAUSED = 3n;

/** Marks a slot being claimed or released; readers skip it. */
export const OWNER_BUSY = -1n;
/** Bytes of query id kept per slot (longer ids are truncated at a character boundary). */
export const ID_BYTES = 96;

/** Typed views over one pool buffer. */
export interface PoolCells {
  readonly buffer: SharedArrayBuffer;
  readonly words: BigInt64Array;
  readonly ids: Uint8Array;
  readonly slots: number;
  readonly size: bigint;
}

/** Total bytes a pool with `slots` query slots needs. */
export function poolBufferBytes(slots: number): number {
  return (HEADER_WORDS + slots * SLOT_WORDS) * 8 + slots * ID_BYTES;
}

/** Views over `buffer`; the header must already be written. */
export function viewCells(buffer: SharedArrayBuffer): PoolCells {
  const header = new BigInt64Array(buffer, 0, HEADER_WORDS);
  const slots = Number(Atomics.load(header, H_SLOTS));
  const wordCount = HEADER_WORDS + slots * SLOT_WORDS;
  const words = new BigInt64Array(buffer, 0, wordCount);
  const ids = new Uint8Array(buffer, wordCount * 8, slots * ID_BYTES);
  return { buffer, words, ids, slots, size: Atomics.load(words, H_SIZE) };
}

/** Index of word `field` of slot `slot`. */
export function slotWord(slot: number, field: number): number {
  return HEADER_WORDS + slot * SLOT_WORDS + field;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Writes `id` (truncated to {@link ID_BYTES} at a character boundary) into slot `slot`'s id area. */
export function writeSlotId(cells: PoolCells, slot: number, id: string): void {
  const scratch = new Uint8Array(ID_BYTES);
  const { written } = encoder.encodeInto(id, scratch);
  cells.ids.set(scratch.subarray(0, written), slot * ID_BYTES);
  Atomics.store(cells.words, slotWord(slot, S_ID_LEN), BigInt(written));
}

/** Reads slot `slot`'s id (copied out of shared memory first: TextDecoder rejects shared views). */
export function readSlotId(cells: PoolCells, slot: number): string {
  const len = Number(Atomics.load(cells.words, slotWord(slot, S_ID_LEN)));
  const start = slot * ID_BYTES;
  return decoder.decode(cells.ids.slice(start, start + Math.min(Math.max(len, 0), ID_BYTES)));
}

/**
 * Releases slot `slot` if it still carries `ticket`: whoever wins the OWNER compare-and-swap subtracts the held
 * bytes from the pool total and frees the slot, so a release racing another release subtracts once.
 * @returns the bytes released, or `null` when the slot no longer carried `ticket`.
 */
export function releaseSlot(cells: PoolCells, slot: number, ticket: bigint): number | null {
  const { words } = cells;
  if (Atomics.compareExchange(words, slotWord(slot, S_OWNER), ticket, OWNER_BUSY) !== ticket) return null;
  // Held first, then the total: the pool total never reads below the sum of the slots.
  const held = Atomics.exchange(words, slotWord(slot, S_HELD), 0n);
  if (held !== 0n) Atomics.sub(words, H_RESERVED, held);
  Atomics.store(words, slotWord(slot, S_PEAK), 0n);
  Atomics.store(words, slotWord(slot, S_THREAD), 0n);
  Atomics.store(words, slotWord(slot, S_ID_LEN), 0n);
  Atomics.store(words, slotWord(slot, S_GUARD), 0n);
  Atomics.store(words, slotWord(slot, S_GROUP), 0n);
  Atomics.store(words, slotWord(slot, S_GROUP_PEAK), 0n);
  Atomics.store(words, slotWord(slot, S_OWNER), 0n);
  return Number(held);
}

/** Throws a RangeError unless `bytes` is a non-negative safe integer (a caller bug otherwise). */
export function checkBytes(bytes: number, what: string): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new RangeError(`${what} must be a non-negative safe integer number of bytes, got ${String(bytes)}`);
  }
}
