/**
 * @module key-suggestion
 * "Did you mean …?" for unknown keys and variables: the closest known name by edit distance, also matching a
 * camelCase spelling of a snake_case key (`maxRows` → `max_rows`, the Helm values spelling).
 */

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

const fold = (s: string): string => s.replace(/[_-]/g, '').toLowerCase();

/** The candidate `given` most likely misspells, or `undefined` when none is close (at most 1 edit, or 1 in 4 characters). */
export function suggestKey(given: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (fold(c) === fold(given)) return c;
    const d = editDistance(given.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const allowed = Math.max(1, Math.floor(given.length / 4));
  return bestDistance <= allowed ? best : undefined;
}
