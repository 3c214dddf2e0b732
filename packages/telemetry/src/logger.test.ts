/**
 * @module logger.test
 * The logger's line format and its never-throw guarantee.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { createLogger } from './logger.js';

const FIXED = new Date('2026-12-01T00:00:00.000Z');

function capture(): { lines: string[]; write: (line: string) => void } {
  const lines: string[] = [];
  return { lines, write: (line) => lines.push(line) };
}

void test('each call writes exactly one JSON line with time, level, logger, msg and nested fields', () => {
  const { lines, write } = capture();
  const log = createLogger('server', { write, now: () => FIXED });
  log.info('listening', { addr: '127.0.0.1:4318', msg: 'cannot overwrite' });
  log.warn('no fields');
  log.error('failed', { attempt: 2 });
  assert.equal(lines.length, 3);
  for (const line of lines) {
    assert.ok(line.endsWith('\n'));
    assert.equal(line.indexOf('\n'), line.length - 1, 'one line per event');
  }
  assert.deepEqual(JSON.parse(lines[0] ?? ''), {
    time: '2026-12-01T00:00:00.000Z',
    level: 'info',
    logger: 'server',
    msg: 'listening',
    fields: { addr: '127.0.0.1:4318', msg: 'cannot overwrite' },
  });
  assert.deepEqual(JSON.parse(lines[1] ?? ''), {
    time: '2026-12-01T00:00:00.000Z',
    level: 'warn',
    logger: 'server',
    msg: 'no fields',
  });
  assert.equal((JSON.parse(lines[2] ?? '') as { level: string }).level, 'error');
});

void test('errors, bigints, cycles and multi-line messages are serialized without throwing or breaking the line', () => {
  const { lines, write } = capture();
  const log = createLogger('wal', { write, now: () => FIXED });
  const cause = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic['self'] = cyclic;
  log.error('append failed\nsecond line', {
    err: new Error('wrapped', { cause }),
    lsn: 2n ** 64n,
    cyclic,
    nan: Number.NaN,
  });
  assert.equal(lines.length, 1);
  const line = lines[0] ?? '';
  assert.equal(line.indexOf('\n'), line.length - 1);
  const parsed = JSON.parse(line) as { msg: string; fields: Record<string, unknown> };
  assert.equal(parsed.msg, 'append failed\nsecond line');
  const err = parsed.fields['err'] as {
    name: string;
    message: string;
    stack: string;
    cause: { message: string; code: string };
  };
  assert.equal(err.name, 'Error');
  assert.equal(err.message, 'wrapped');
  assert.match(err.stack, /wrapped/);
  assert.deepEqual([err.cause.message, err.cause.code], ['disk full', 'ENOSPC']);
  assert.equal(parsed.fields['lsn'], '18446744073709551616');
  assert.deepEqual(parsed.fields['cyclic'], { a: 1, self: '[Circular]' });
  assert.equal(parsed.fields['nan'], 'NaN');
});

void test('a failing sink does not make a log call throw', () => {
  const log = createLogger('x', {
    write: () => {
      throw new Error('EPIPE');
    },
  });
  assert.doesNotThrow(() => log.error('still fine'));
});
