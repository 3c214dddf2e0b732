/**
 * @module worker-heap-start.test
 * The process-wide V8 flag is set before a query worker is created and reset to V8's default once every worker
 * started under it is online, failed or gone: overlapping starts share one window, a start that throws resets it,
 * and a worker's later events never reset it twice.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { createWorkerHeapStart } from './worker-heap-start.js';

function setup(): { flags: string[]; start: ReturnType<typeof createWorkerHeapStart>['start'] } {
  const flags: string[] = [];
  const { start } = createWorkerHeapStart({ initialOldSpaceMb: 64, setFlags: (f) => flags.push(f) });
  return { flags, start };
}

test('the first limit is raised before the worker is created and reset once it is online', () => {
  const { flags, start } = setup();
  let seenAtCreate: string[] = [];
  const w = start(() => {
    seenAtCreate = [...flags];
    return new EventEmitter();
  });
  assert.deepEqual(seenAtCreate, ['--initial-old-space-size=64'], 'set before the isolate is made');
  assert.equal(flags.length, 1, 'not reset while the worker starts');
  w.emit('online');
  assert.deepEqual(flags, ['--initial-old-space-size=64', '--initial-old-space-size=0']);
  w.emit('exit');
  assert.equal(flags.length, 2, 'a later event does not reset again');
  // Nor does it unbalance the count: the next start raises the limit again.
  const next = start(() => new EventEmitter());
  assert.deepEqual(flags.slice(2), ['--initial-old-space-size=64']);
  next.emit('online');
  assert.deepEqual(flags.slice(2), ['--initial-old-space-size=64', '--initial-old-space-size=0']);
});

test('overlapping starts share one window: reset only when the last of them is online or gone', () => {
  const { flags, start } = setup();
  const a = start(() => new EventEmitter());
  const b = start(() => new EventEmitter());
  assert.deepEqual(flags, ['--initial-old-space-size=64']);
  a.emit('online');
  assert.equal(flags.length, 1, 'b is still starting');
  b.emit('error');
  assert.deepEqual(flags, ['--initial-old-space-size=64', '--initial-old-space-size=0']);
  const c = start(() => new EventEmitter());
  c.emit('exit');
  assert.deepEqual(flags.slice(2), ['--initial-old-space-size=64', '--initial-old-space-size=0']);
});

test('a worker that cannot be created resets the flag and the error is the caller’s', () => {
  const { flags, start } = setup();
  assert.throws(
    () =>
      start(() => {
        throw new Error('no threads left');
      }),
    /no threads left/,
  );
  assert.deepEqual(flags, ['--initial-old-space-size=64', '--initial-old-space-size=0']);
});
