/**
 * @module position
 * WAL positions: a segment sequence number and the byte offset just after a frame in it.
 */

/**
 * A point in the log: everything up to `offset` (exclusive) in segment `segment`, and every earlier segment.
 * `offset` is the byte offset just AFTER a frame (or the segment header size for "nothing in this segment").
 */
export type WalPosition = { readonly segment: number; readonly offset: number };

/** Orders positions: negative if `a` is before `b`, 0 if equal, positive if after. */
export function compareWalPositions(a: WalPosition, b: WalPosition): number {
  return a.segment !== b.segment ? a.segment - b.segment : a.offset - b.offset;
}

/** `segment:offset`, for messages. */
export function formatWalPosition(p: WalPosition): string {
  return `${p.segment}:${p.offset}`;
}
