/**
 * @module lane-table
 * Renders lane reports as a fixed-width text table: one row per lane, one column per refusal kind seen in any
 * lane (so the rows line up and a kind that only one lane met still reads 0 in the other).
 */
import type { LaneReport } from './lane-report.js';

/** `ok / sent`, or `undefined` when the lane sent nothing. */
export function servedShare(lane: LaneReport): number | undefined {
  return lane.sent === 0 ? undefined : lane.ok / lane.sent;
}

function ms(value: number | null): string {
  return value === null ? '-' : String(Math.round(value));
}

/** The table's lines (header first), each indented by `indent`. */
export function laneTable(lanes: Readonly<Record<string, LaneReport>>, indent = '  '): string[] {
  const kinds = [...new Set(Object.values(lanes).flatMap((l) => Object.keys(l.rejections)))].sort();
  const header = ['lane', 'clients', 'sent', 'served', 'served %', 'p50 ms', 'p99 ms', ...kinds];
  const rows = Object.entries(lanes).map(([name, lane]) => {
    const share = servedShare(lane);
    return [
      name,
      String(lane.clients),
      String(lane.sent),
      String(lane.ok),
      share === undefined ? '-' : `${(share * 100).toFixed(2)} %`,
      ms(lane.okLatencyMs.p50),
      ms(lane.okLatencyMs.p99),
      ...kinds.map((k) => String(lane.rejections[k] ?? 0)),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  // The lane name reads left-aligned; every figure right-aligned so the digits line up.
  const line = (cells: readonly string[]): string =>
    indent + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
