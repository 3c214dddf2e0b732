/**
 * @module config-issue.test
 * The startup error text.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { formatConfigIssues } from './config-issue.js';

describe('formatConfigIssues', () => {
  test('renders one heading with the count and source, then one line per issue', () => {
    const text = formatConfigIssues(
      [
        { path: 'querier.limits.max_rows', message: 'must be an integer >= 1, got 0' },
        { path: '', message: 'no role is enabled' },
      ],
      { source: 'sluice.yaml' },
    );
    assert.equal(
      text,
      'invalid configuration in sluice.yaml (2 problems):\n' +
        '  - querier.limits.max_rows: must be an integer >= 1, got 0\n' +
        '  - no role is enabled',
    );
  });

  test('says "1 problem" for one issue and omits the source when none is given', () => {
    assert.equal(formatConfigIssues([{ path: 'a', message: 'b' }]), 'invalid configuration (1 problem):\n  - a: b');
  });
});
