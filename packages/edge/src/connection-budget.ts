/**
 * @module connection-budget
 * Sizes each listener's connection cap so that the process never runs out of file handles from its ports: every
 * socket is a handle, and the WAL, the sink worker's Parquet files, SQLite, object-store sockets and the query
 * workers need handles too. A fixed reserve is kept for them; what remains of the soft open-file limit is shared
 * by the listeners whose cap is not set explicitly (docs/security.md, "Connection caps").
 *
 * Each listener holds at most `maxConnections` served connections plus `refusalSlots` connections that are over
 * the cap and are being told so (a 503 on HTTP); beyond both, new connections are closed at accept.
 */

/** File handles kept for everything that is not a client connection (measured idle: ~35 handles). */
export const RESERVED_FILE_HANDLES = 256;
/** Ceiling of a derived cap: plenty for direct clients; set the key explicitly for more. */
export const MAX_DERIVED_CONNECTIONS = 4096;
/** Derived cap when the open-file limit cannot be read (not Linux) or is unlimited. */
export const FALLBACK_CONNECTIONS = 1024;
/** Most over-cap connections a listener holds at once to answer them. */
export const MAX_REFUSAL_SLOTS = 64;
/** Smallest derived cap; below it the limit is too low to run and startup warns. */
const MIN_DERIVED_CONNECTIONS = 8;

/** One listener asking for a cap. */
export interface ListenerCapRequest {
  /** Listener id for logs and metrics: `otlp_http`, `otlp_grpc`, `query_http`. */
  readonly listener: string;
  /** The configuration key of its cap, named in refusals and logs. */
  readonly key: string;
  /** The key's value; `null` = derive from the open-file limit. */
  readonly explicit: number | null;
}

/** The cap a listener runs with. */
export interface ListenerCap {
  readonly listener: string;
  readonly key: string;
  /** Connections served at once. */
  readonly maxConnections: number;
  /** Over-cap connections held at once to be refused with an answer; more are closed at accept. */
  readonly refusalSlots: number;
  readonly source: 'explicit' | 'derived';
}

/** The caps of every listener in the process, and what they were derived from. */
export interface ConnectionPlan {
  readonly caps: readonly ListenerCap[];
  /** The soft open-file limit, or `null` when unknown or unlimited. */
  readonly openFileLimit: number | null;
  readonly reservedHandles: number;
  /** Operator-facing warnings (caps that do not fit the open-file limit). */
  readonly warnings: readonly string[];
}

function slotsFor(max: number): number {
  return Math.min(MAX_REFUSAL_SLOTS, Math.max(1, Math.ceil(max / 8)));
}

/** Plans the caps of `listeners` under `openFileLimit`. */
export function planConnectionCaps(
  listeners: readonly ListenerCapRequest[],
  openFileLimit: number | null,
): ConnectionPlan {
  const warnings: string[] = [];
  const explicitHandles = listeners
    .filter((l) => l.explicit !== null)
    .reduce((sum, l) => sum + l.explicit! + slotsFor(l.explicit!), 0);
  const derivedCount = listeners.filter((l) => l.explicit === null).length;
  let derived = { max: FALLBACK_CONNECTIONS, slots: slotsFor(FALLBACK_CONNECTIONS) };
  if (openFileLimit !== null && derivedCount > 0) {
    const share = Math.floor((openFileLimit - RESERVED_FILE_HANDLES - explicitHandles) / derivedCount);
    const max = Math.min(MAX_DERIVED_CONNECTIONS, Math.max(MIN_DERIVED_CONNECTIONS, Math.floor((share * 7) / 8)));
    derived = { max, slots: Math.max(1, Math.min(MAX_REFUSAL_SLOTS, share - max)) };
  }
  const caps = listeners.map((l): ListenerCap =>
    l.explicit !== null
      ? {
          listener: l.listener,
          key: l.key,
          maxConnections: l.explicit,
          refusalSlots: slotsFor(l.explicit),
          source: 'explicit',
        }
      : {
          listener: l.listener,
          key: l.key,
          maxConnections: derived.max,
          refusalSlots: derived.slots,
          source: 'derived',
        },
  );
  if (openFileLimit !== null) {
    const total = caps.reduce((sum, c) => sum + c.maxConnections + c.refusalSlots, 0) + RESERVED_FILE_HANDLES;
    if (total > openFileLimit) {
      warnings.push(
        `connection caps (${caps.map((c) => `${c.key}=${c.maxConnections}`).join(', ')}) plus ${RESERVED_FILE_HANDLES} reserved file handles need ${total} handles, above the open-file limit ${openFileLimit} (ulimit -n): raise the limit or lower the caps, or a connection flood can starve the WAL and the sink of file handles`,
      );
    }
  }
  return { caps, openFileLimit, reservedHandles: RESERVED_FILE_HANDLES, warnings };
}
