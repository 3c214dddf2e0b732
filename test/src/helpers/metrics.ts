/**
 * @module metrics
 * Reads one Prometheus series value from a `/metrics` endpoint.
 */
import { sampleSum, scrapeMetrics } from './metrics-text.js';

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

/**
 * Pool bytes held by queries (and compaction loans) at `baseUrl`: `sluice_query_pool_reserved` less what the query
 * workers' footer caches hold (`sluice_query_pool_footer_cache`), which stays reserved between queries by design
 * (docs/design/query-governance.md, "Footer cache"). Read from one scrape, so the two figures agree.
 */
export async function queryHeldPoolBytes(baseUrl: string): Promise<number> {
  const text = await scrapeMetrics(baseUrl);
  return (
    (sampleSum(text, 'sluice_query_pool_reserved') ?? 0) - (sampleSum(text, 'sluice_query_pool_footer_cache') ?? 0)
  );
}
