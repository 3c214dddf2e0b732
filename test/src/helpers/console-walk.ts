/**
 * @module console-walk
 * The console, in a real browser against a real `sluice serve` with a corpus exported over OTLP: a typed query
 * shows the histogram and the rows, a row expands to its record, an attribute and a template become filters, a
 * syntax error is marked at its position, a drag on the histogram zooms, live mode shows a record exported after
 * it started, a 503 (a tail over max_live_tails) is shown with its limit and a retry button, and (local store) a
 * 422 (a query over the per-query memory ceiling) with its limit and remedy. Screenshots of every step are written
 * to the test's temp directory and their paths printed. On s3rver the walk repeats the steps that read the store
 * (query, histogram, rows, record, templates, live); the others do not depend on the backend and run once. One
 * file per backend (console/*.test.ts) so the runner can run them side by side.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { LogRecord } from '@sluice/core';
import { browserSkipReason, launchChromium } from './browser.js';
import { CORPUS_BASE_NS, corpusRecords, exportRecords } from './query-corpus.js';
import { waitForStoredRows, type StoreLocation } from './read-store.js';
import { startS3Server, type TestS3Server } from './s3-server.js';
import { spawnSluice, tempDir, type SluiceProcess } from './spawn-sluice.js';
import { testConfigYaml } from './test-config.js';

const POOL_BYTES = 33_554_432; // the 32 MiB minimum
const RECORDS = 600;
const BIG_RECORDS = 800;
const HOUR_NS = 3_600_000_000_000n;

/** The corpus of `tenantIndex`, moved so that it ends a minute ago (the console's presets are relative to now). */
function recentRecords(tenantIndex: number, n: number): LogRecord[] {
  const shift = BigInt(Date.now() - 60_000) * 1_000_000n - 3n * HOUR_NS - CORPUS_BASE_NS;
  return corpusRecords(tenantIndex, n).map((r) => ({
    ...r,
    timeUnixNano: r.timeUnixNano + shift,
    observedTimeUnixNano: r.observedTimeUnixNano + shift,
  }));
}

/** Page helpers that also keep a numbered screenshot of every step. */
function steps(page: Page, dir: string, prefix: string) {
  let n = 0;
  return {
    async shot(name: string): Promise<void> {
      const path = join(dir, `${prefix}-${String(++n).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path });
      console.log(`screenshot: ${path}`);
    },
    /** Types a statement into the editor and presses Enter. */
    async query(text: string): Promise<void> {
      await page.fill('#query', text);
      await page.press('#query', 'Enter');
    },
    async summary(): Promise<string> {
      return (await page.textContent('[data-testid=summary]')) ?? '';
    },
  };
}

/** Waits until `/v1/status` reports no open tail (the server has seen the last one go). */
async function waitTailsClosed(queryUrl: string): Promise<void> {
  for (;;) {
    const st = (await (await fetch(`${queryUrl}/v1/status`)).json()) as { tails: { open: number } };
    if (st.tails.open === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Opens a live tail on a connection of its own; `close()` destroys that connection. */
function openTail(queryUrl: string): Promise<{ readonly status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${queryUrl}/v1/tail`, { method: 'POST', agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end('true');
  });
}

/** Waits until the summary says the run has finished (no longer "running…"). */
async function settled(page: Page): Promise<void> {
  // A selector, not a script: the page's CSP forbids evaluating strings, and the test keeps the CSP on.
  await page.waitForSelector('body:not(.busy)', { timeout: 20_000 });
}

/**
 * Registers the console walk for one store backend: the 422 step needs the bulk tenant, seeded on the local store only.
 */
export function describeConsoleWalk(backend: 'local' | 's3'): void {
  const skip = browserSkipReason();
  describe(`the console in Chromium, store on ${backend}`, { skip: skip ?? false }, () => {
    let s3: TestS3Server | undefined;
    let server: SluiceProcess;
    let browser: Browser;
    let page: Page;
    const dir = tempDir(`console-${backend}`);

    before(async () => {
      const t0 = Date.now();
      const mark = (what: string): void => console.log(`${backend}: ${what} after ${Date.now() - t0} ms`);
      if (backend === 's3') s3 = await startS3Server();
      const location: StoreLocation = s3 ? { backend: 's3', s3 } : { backend: 'local', root: join(dir, 'data') };
      server = await spawnSluice(
        testConfigYaml({
          walDir: join(dir, 'wal'),
          dataDir: join(dir, 'data'),
          ...(s3 ? { s3 } : {}),
          flushAgeSecs: 1,
          // The walk reads what the sink flushed; a merge of the bulk tenant's files would only add load and
          // hold the stop.
          compaction: { enabled: false },
          querier: true,
          defaultTenant: 'acme',
          querierLimits: {
            memory_pool_bytes: POOL_BYTES,
            light_query_permits: 0,
            max_live_tails: 1,
            tail_poll_ms: 300,
          },
        }),
        { dir },
      );
      await server.waitReady();
      await exportRecords(server.otlpHttpUrl, 'acme', recentRecords(0, RECORDS));
      let stored = RECORDS;
      if (backend === 'local') {
        // Long bodies: decoding them for a full scan needs more than the whole 32 MiB pool.
        const big = recentRecords(1, BIG_RECORDS).map((r, i) => ({
          ...r,
          body: { kind: 'string' as const, value: `bulk ${i} ${'x'.repeat(20_000 + (i % 7))}` },
        }));
        await exportRecords(server.otlpHttpUrl, 'bulk', big, 100);
        stored += BIG_RECORDS;
      }
      mark('exported');
      await waitForStoredRows(location, stored);
      mark('stored');
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
      await page.goto(`${server.queryUrl}/`);
      await page.waitForSelector('[data-testid=pool]');
      await settled(page);
      mark('page loaded');
    });
    after(async () => {
      const t0 = Date.now();
      await browser?.close();
      if (server?.child.exitCode === null) await server.stop();
      // A stop held by a connection the walk left open would show here (the shutdown timeout is 30 s).
      if (Date.now() - t0 > 5000) console.log(`${backend}: slow stop:\n${server.logs.slice(-4).join('\n')}`);
      await s3?.stop();
    });

    test('a typed query shows the histogram split by severity and the rows, newest first', async () => {
      const s = steps(page, dir, `${backend}-a`);
      await page.selectOption('#range', '6h');
      await settled(page);
      await s.query('severity >= warn');
      await settled(page);
      await s.shot('query');
      const summary = await s.summary();
      // The console shows what the API answers for the same statement.
      const res = await fetch(`${server.queryUrl}/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'X-Sluice-Tenant': 'acme' },
        body: 'severity >= warn | range(-6h, now) | count',
      });
      const expected = ((await res.json()) as { aggregate: { count: number }[] }).aggregate[0]!.count;
      assert.ok(expected > 0 && expected < RECORDS);
      assert.match(summary, new RegExp(`^${expected} matching · showing ${expected} newest first`));
      const bars = await page.$$eval('[data-testid=histogram-svg] rect.bar', (rs) =>
        rs.map((r) => r.getAttribute('class')),
      );
      assert.ok(bars.length > 10, `histogram bars: ${bars.length}`);
      assert.ok(bars.some((c) => c?.includes('sev-warn')) && bars.some((c) => c?.includes('sev-error')));
      assert.ok(!bars.some((c) => c?.includes('sev-info')), 'the filter applies to the histogram too');
      const times = await page.$$eval('[data-testid=row] time', (ts) => ts.map((t) => t.textContent ?? ''));
      assert.ok(times.length > 0);
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
      const pool = (await page.textContent('[data-testid=pool]')) ?? '';
      assert.match(pool, /\/ 32\.0 MiB$/);
    });

    test('a row expands to the whole record, and a click on an attribute adds it as a filter', async () => {
      const s = steps(page, dir, `${backend}-b`);
      await page.click('[data-testid=row] >> nth=0 >> .row-line');
      const details = page.locator('[data-testid=row-details]').first();
      await details.waitFor();
      const text = (await details.textContent()) ?? '';
      for (const want of ['trace_id', 'template', 'http.method', 'service.name', 'latency_ms'])
        assert.ok(text.includes(want), `${want} in ${text}`);
      await s.shot('expanded');
      await details.locator('button[data-filter^="attr[\\"http.method\\"]"]').click();
      await settled(page);
      const query = await page.inputValue('#query');
      assert.match(query, /^severity >= warn and attr\["http\.method"\] == "(GET|POST)"$/);
      const summary = await s.summary();
      const matching = Number(summary.split(' ')[0]);
      assert.ok(matching > 0 && matching < 250, summary);
      await s.shot('attribute-filter');
    });

    test('the templates view lists mined templates with counts; a click filters by one', async () => {
      const s = steps(page, dir, `${backend}-c`);
      await s.query('');
      await settled(page);
      const first = page.locator('[data-testid=template]').first();
      const id = await first.getAttribute('data-template-id');
      const count = Number(await first.locator('.count').textContent());
      const text = (await first.locator('.template-text').textContent()) ?? '';
      assert.ok(text.includes('<*>'), `a mined template: ${text}`);
      await s.shot('templates');
      await first.locator('button').click();
      await settled(page);
      assert.equal(await page.inputValue('#query'), `template_id == ${id}`);
      const summary = await s.summary();
      assert.equal(Number(summary.split(' ')[0]), count, summary);
      await s.shot('template-filter');
    });

    test('live mode shows a record exported after it started', async () => {
      const s = steps(page, dir, `${backend}-f`);
      await page.fill('#query', 'contains(body, "live-marker")');
      await page.check('#live');
      await page.waitForSelector('body.live');
      const [marker] = recentRecords(0, 1).map((r) => ({
        ...r,
        timeUnixNano: BigInt(Date.now()) * 1_000_000n,
        body: { kind: 'string' as const, value: 'live-marker arrived' },
      }));
      await exportRecords(server.otlpHttpUrl, 'acme', [marker!]);
      await page.waitForSelector('[data-testid=row] >> text=live-marker arrived', { timeout: 30_000 });
      await s.shot('live');
    });

    // Store-independent steps (and the 422, which needs the bulk tenant) run once, on the local store.
    if (backend === 'local') {
      test('a 503 is shown with its limit and a retry button', async () => {
        // The one tail slot (max_live_tails: 1) is the browser's own live tail, still open.
        const s = steps(page, dir, `${backend}-g`);
        const res = await fetch(`${server.queryUrl}/v1/tail`, { method: 'POST', body: 'true' });
        assert.equal(res.status, 503, 'the slot is taken');
        await res.body?.cancel();
        await page.uncheck('#live');
        // The slot is given back once the server has seen the browser's tail go: wait for /v1/status to say so.
        await waitTailsClosed(server.queryUrl!);
        // Hold the slot from here (a socket of our own, destroyed after), then ask the console for a tail: refused,
        // shown with a retry button.
        const holder = await openTail(server.queryUrl!);
        try {
          assert.equal(holder.status, 200);
          // A click, not check(): the refused tail unchecks the box again at once.
          await page.click('#live');
          await page.waitForSelector('[data-testid=retry]');
          assert.match((await page.textContent('[data-testid=error-kind]')) ?? '', /^503 query_tail_limit/);
          assert.equal(await page.textContent('[data-testid=error-limit]'), 'querier.limits.max_live_tails');
          await s.shot('busy-503');
        } finally {
          holder.close();
        }
        await waitTailsClosed(server.queryUrl!);
      });

      test('a syntax error is shown at its position', async () => {
        const s = steps(page, dir, `${backend}-d`);
        await s.query('severity >= and service == "x"');
        await page.waitForSelector('[data-testid=syntax-mark]');
        assert.equal(await page.textContent('[data-testid=syntax-mark]'), 'and');
        assert.match((await page.textContent('[data-testid=syntax-message]')) ?? '', /at 12/);
        await s.shot('syntax-error');
      });

      test('dragging across the histogram zooms into that sub-range', async () => {
        const s = steps(page, dir, `${backend}-e`);
        await page.selectOption('#range', '6h');
        await settled(page);
        await s.query('');
        await settled(page);
        const before = Number((await s.summary()).split(' ')[0]);
        const box = (await page.locator('[data-testid=histogram-svg]').boundingBox())!;
        await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
        await page.mouse.down();
        await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2, { steps: 5 });
        await page.mouse.up();
        await settled(page);
        assert.equal(await page.inputValue('#range'), 'absolute');
        const after = Number((await s.summary()).split(' ')[0]);
        assert.ok(after > 0 && after < before, `${after} of ${before}`);
        await s.shot('zoomed');
        await page.selectOption('#range', '6h');
        await settled(page);
      });

      test('a 422 (a query needing more than the pool) is shown with its message, limit and remedy', async () => {
        const s = steps(page, dir, `${backend}-h`);
        await page.fill('#tenant', 'bulk');
        // Every row of the bulk tenant, each ~16 KB: more than the query may hold.
        await s.query('limit 5000');
        await settled(page);
        await page.waitForSelector('[data-testid=error-kind]');
        assert.match((await page.textContent('[data-testid=error-kind]')) ?? '', /^422 query_memory_limit/);
        assert.match((await page.textContent('[data-testid=error-message]')) ?? '', /querier\.limits\./);
        assert.match((await page.textContent('[data-testid=error-advice]')) ?? '', /narrow the time range/);
        assert.equal(await page.locator('[data-testid=retry]').count(), 0, 'no retry for "ask for less"');
        await s.shot('limit-422');
      });
    }
  });
}
