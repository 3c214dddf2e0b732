/**
 * @module readiness.test
 * Several named checks make the receiver not ready; /readyz names every one that fails.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createReadiness } from './readiness.js';

test('ready only when every check passes; the reason names each failing check, in the order added', () => {
  const readiness = createReadiness();
  let replaying = true;
  let low = false;
  readiness.add('wal_replay', () => (replaying ? 'WAL replay in progress' : null));
  readiness.add('disk_low', () => (low ? 'the WAL volume has 4.0% free space' : null));
  assert.equal(readiness.notReadyReason(), 'wal_replay: WAL replay in progress');
  low = true;
  assert.equal(
    readiness.notReadyReason(),
    'wal_replay: WAL replay in progress; disk_low: the WAL volume has 4.0% free space',
  );
  replaying = false;
  assert.deepEqual(readiness.notReady(), [{ name: 'disk_low', message: 'the WAL volume has 4.0% free space' }]);
  low = false;
  assert.equal(readiness.notReadyReason(), null);
  assert.deepEqual(readiness.notReady(), []);
});

test('a check name is added once', () => {
  const readiness = createReadiness();
  readiness.add('disk_low', () => null);
  assert.throws(() => readiness.add('disk_low', () => null), /added twice/);
});
