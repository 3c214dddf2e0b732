/**
 * @module lane-report
 * Per-lane accounting for the governance load: what one lane of query clients sent, what was served, what was
 * refused (by kind) and how long the served answers took.
 */

/** Latency of a lane's served (200) answers, in milliseconds; `null` when nothing was served. */
export interface LaneLatency {
  readonly p50: number | null;
  readonly p99: number | null;
}

/** What one lane observed. */
export interface LaneReport {
  readonly clients: number;
  /**
   * Queries issued: every answered request plus any that still failed at the transport after its one retry (those
   * are counted under `rejections.transport_error`), so `ok / sent` is the served share.
   */
  readonly sent: number;
  /** Answers with status 200. */
  readonly ok: number;
  /** Refusals by `error.kind` (`untyped:<status>` without the envelope, `transport_error` for no answer). */
  readonly rejections: Record<string, number>;
  /** From the first attempt to the answer, so a transport retry counts against the query that needed it. */
  readonly okLatencyMs: LaneLatency;
}

/** Mutable tally of one lane while the load runs; {@link LaneTally.report} freezes it. */
export class LaneTally {
  private sent = 0;
  private ok = 0;
  private readonly rejections: Record<string, number> = {};
  private readonly okMs: number[] = [];

  constructor(private readonly clients: number) {}

  /** A 200 answer that took `ms`. */
  served(ms: number): void {
    this.sent++;
    this.ok++;
    this.okMs.push(ms);
  }

  /** A refusal (or a request with no answer) of kind `kind`. */
  refused(kind: string): void {
    this.sent++;
    this.rejections[kind] = (this.rejections[kind] ?? 0) + 1;
  }

  /** The lane's report. */
  report(): LaneReport {
    const sorted = [...this.okMs].sort((a, b) => a - b);
    return {
      clients: this.clients,
      sent: this.sent,
      ok: this.ok,
      rejections: { ...this.rejections },
      okLatencyMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) },
    };
  }
}

/** Nearest-rank percentile `q` (0 < q ≤ 1) of ascending `sorted`; `null` when empty. */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1]!;
}

/** A lane that sent nothing (the report of a load that aborted). */
export function emptyLane(clients: number): LaneReport {
  return new LaneTally(clients).report();
}
