/**
 * @module cli-args.test
 * The command line: `serve` with or without `--config`, help and version from anywhere, and a specific usage
 * error (exit 2 in main) for everything else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCliArgs } from './cli-args.js';

test('serve takes an optional --config FILE, given as one or two arguments', () => {
  assert.deepEqual(parseCliArgs(['serve']), { kind: 'serve', configPath: null });
  assert.deepEqual(parseCliArgs(['serve', '--config', 'a.yaml']), { kind: 'serve', configPath: 'a.yaml' });
  assert.deepEqual(parseCliArgs(['serve', '--config=b.yaml']), { kind: 'serve', configPath: 'b.yaml' });
  assert.deepEqual(parseCliArgs(['serve', '--config', '-odd.yaml']), { kind: 'serve', configPath: '-odd.yaml' });
  assert.deepEqual(parseCliArgs(['serve', '--config', 'a.yaml', '--config', 'c.yaml']), {
    kind: 'serve',
    configPath: 'c.yaml',
  });
});

test('--help / -h and --version win wherever they appear, even beside bad arguments', () => {
  for (const argv of [['--help'], ['-h'], ['serve', '--help'], ['srve', '-h', '--bogus'], ['--version', '--help']])
    assert.deepEqual(parseCliArgs(argv), { kind: 'help' }, argv.join(' '));
  for (const argv of [['--version'], ['serve', '--config', 'x', '--version'], ['nope', '--version']])
    assert.deepEqual(parseCliArgs(argv), { kind: 'version' }, argv.join(' '));
});

test('every other command line is a usage error naming the problem', () => {
  const cases: [string[], string][] = [
    [[], 'missing command'],
    [['srve'], "unknown command 'srve'"],
    [['--config', 'a.yaml', 'serve'], "unknown command '--config'"],
    [['--', 'serve'], "unknown command '--'"],
    [['serve', '--config'], '--config needs a file path'],
    [['serve', 'extra'], "unknown argument 'extra'"],
    [['serve', '--bogus'], "unknown argument '--bogus'"],
    [['serve', '--bogus=1'], "unknown argument '--bogus=1'"],
    [['serve', '-x'], "unknown argument '-x'"],
    [['serve', '--'], "unknown argument '--'"],
  ];
  for (const [argv, message] of cases)
    assert.deepEqual(parseCliArgs(argv), { kind: 'usage_error', message }, argv.join(' '));
});
