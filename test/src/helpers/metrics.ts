/**
 * @module metrics
 * Reads one Prometheus series value from a `/metrics` endpoint.
 */

/** Sum of every sample of `name` (all label sets) at `baseUrl/metrics`; `labels` filters by substring. */
export async function metricValue(baseUrl: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labels !== '' && !rest.includes(labels)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
