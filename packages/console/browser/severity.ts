/**
 * @module severity
 * OpenTelemetry severity numbers in their six bands (and 0, unset), as the histogram stacks them and the rows
 * label them.
 */

/** A band: its name (also the CSS class suffix) and its number range. */
export interface SeverityBand {
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

/** Bands from the least to the most severe. */
export const BANDS: readonly SeverityBand[] = [
  { name: 'unset', min: 0, max: 0 },
  { name: 'trace', min: 1, max: 4 },
  { name: 'debug', min: 5, max: 8 },
  { name: 'info', min: 9, max: 12 },
  { name: 'warn', min: 13, max: 16 },
  { name: 'error', min: 17, max: 20 },
  { name: 'fatal', min: 21, max: 24 },
];

/** The band of severity number `n` (out-of-range numbers count as unset). */
export function bandOf(n: number | undefined): SeverityBand {
  return BANDS.find((b) => n !== undefined && n >= b.min && n <= b.max) ?? BANDS[0]!;
}
