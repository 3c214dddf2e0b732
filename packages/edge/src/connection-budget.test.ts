/**
 * Connection caps sized from the open-file limit: a reserve for the WAL, sink and workers, the rest shared by
 * the listeners without an explicit cap, and a warning when explicit caps do not fit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FALLBACK_CONNECTIONS,
  MAX_DERIVED_CONNECTIONS,
  RESERVED_FILE_HANDLES,
  planConnectionCaps,
  type ListenerCapRequest,
} from './connection-budget.js';
import { parseOpenFileLimit, readOpenFileLimit } from './open-file-limit.js';

const three: ListenerCapRequest[] = [
  { listener: 'otlp_http', key: 'receiver.max_http_connections', explicit: null },
  { listener: 'otlp_grpc', key: 'receiver.max_grpc_connections', explicit: null },
  { listener: 'query_http', key: 'querier.max_connections', explicit: null },
];

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

describe('connection budget', () => {
  test('the soft open-file limit is read from /proc/<pid>/limits', () => {
    assert.equal(parseOpenFileLimit(LIMITS), 1024);
    assert.equal(parseOpenFileLimit(LIMITS.replace('1024   ', 'unlimited')), null);
    assert.equal(parseOpenFileLimit('nothing here'), null);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-limits-'));
    writeFileSync(join(dir, 'limits'), LIMITS);
    assert.equal(readOpenFileLimit(join(dir, 'limits')), 1024);
    assert.equal(readOpenFileLimit(join(dir, 'absent')), null);
  });

  test('under ulimit -n 1024, three listeners and the reserve fit inside the limit', () => {
    const plan = planConnectionCaps(three, 1024);
    assert.deepEqual(plan.warnings, []);
    const total = plan.caps.reduce((s, c) => s + c.maxConnections + c.refusalSlots, 0) + RESERVED_FILE_HANDLES;
    assert.ok(total <= 1024, `${total} handles`);
    for (const c of plan.caps) {
      assert.equal(c.source, 'derived');
      assert.equal(c.maxConnections, 224); // (1024 - 256) / 3 = 256, 7/8 of it served
      assert.equal(c.refusalSlots, 32);
    }
  });

  test('a large limit is capped per listener; an unknown limit uses the fallback', () => {
    for (const c of planConnectionCaps(three, 1_048_576).caps) assert.equal(c.maxConnections, MAX_DERIVED_CONNECTIONS);
    for (const c of planConnectionCaps(three, null).caps) assert.equal(c.maxConnections, FALLBACK_CONNECTIONS);
  });

  test('explicit caps are kept, derived ones share what they leave, and an overcommit is warned about', () => {
    const plan = planConnectionCaps([{ ...three[0]!, explicit: 100 }, three[1]!, { ...three[2]!, explicit: 50 }], 1024);
    assert.deepEqual(
      plan.caps.map((c) => [c.maxConnections, c.source]),
      [
        [100, 'explicit'],
        [Math.floor(((1024 - 256 - 113 - 57) * 7) / 8), 'derived'],
        [50, 'explicit'],
      ],
    );
    assert.deepEqual(plan.warnings, []);
    const over = planConnectionCaps([{ ...three[2]!, explicit: 2000 }], 1024);
    assert.equal(over.warnings.length, 1);
    assert.match(over.warnings[0]!, /querier\.max_connections=2000.*above the open-file limit 1024/);
  });
});
