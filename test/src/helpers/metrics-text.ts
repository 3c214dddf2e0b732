/**
 * @module metrics-text
 * One `/metrics` scrape, read several times: unlike `metricValue` (metrics.ts), a series that is absent reads as
 * `undefined` rather than 0, so a check for "0 at the end" cannot pass on a metric the server never exports.
 */

/** The Prometheus text of `baseUrl/metrics`. */
export async function scrapeMetrics(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/metrics answered ${res.status}`);
  return res.text();
}

/** Sum of every sample of `name` (all label sets) in `text`, or `undefined` when it has none. */
export function sampleSum(text: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    total = (total ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
