/**
 * @module auth-config.test
 * `auth.*` and the listener connection caps: off by default; enabled needs exactly one token source; a token
 * source with auth disabled is refused (never run open by mistake); env-only mode carries the inline document.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseConfig } from './parse-config.js';

function issuesOf(fileText: string): { path: string; message: string }[] {
  const r = parseConfig({ fileText, env: {} });
  assert.ok(!r.ok, 'expected a rejection');
  return r.error;
}

describe('auth configuration', () => {
  test('auth.enabled with a tokens file, or with the inline document, is accepted', () => {
    const file = parseConfig({ fileText: 'auth:\n  enabled: true\n  tokens_file: /etc/sluice/tokens.yaml\n', env: {} });
    assert.ok(file.ok);
    assert.deepEqual(file.value.auth, {
      enabled: true,
      tokensFile: '/etc/sluice/tokens.yaml',
      tokens: null,
      protectMetrics: true,
    });
    const inline = parseConfig({
      fileText: 'auth:\n  enabled: true\n  tokens: ${env:TOKENS}\n  protect_metrics: false\n',
      env: { TOKENS: '{"tokens":[]}' },
    });
    assert.ok(inline.ok);
    assert.equal(inline.value.auth.tokens, '{"tokens":[]}');
    assert.equal(inline.value.auth.protectMetrics, false);
  });

  test('env-only mode: SLUICE_AUTH_ENABLED and SLUICE_AUTH_TOKENS', () => {
    const r = parseConfig({ env: { SLUICE_AUTH_ENABLED: 'true', SLUICE_AUTH_TOKENS: '{"tokens":[]}' } });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.value.auth.enabled, true);
    assert.equal(r.value.auth.tokens, '{"tokens":[]}');
  });

  test('enabled without a token source, or with both, is refused naming the keys', () => {
    assert.deepEqual(issuesOf('auth:\n  enabled: true\n'), [
      {
        path: 'auth.enabled',
        message: 'auth is enabled but no token is configured: set auth.tokens_file (or auth.tokens)',
      },
    ]);
    assert.deepEqual(issuesOf('auth:\n  enabled: true\n  tokens_file: a.yaml\n  tokens: "{}"\n'), [
      { path: 'auth.tokens', message: 'set either auth.tokens_file or auth.tokens, not both' },
    ]);
  });

  test('a token source while auth is disabled is refused: the gateway never runs open by mistake', () => {
    assert.deepEqual(issuesOf('auth:\n  tokens_file: a.yaml\n'), [
      { path: 'auth.tokens_file', message: 'is set but auth.enabled is false: set auth.enabled: true, or unset it' },
    ]);
  });

  test('connection caps are optional integers >= 1 on each listener', () => {
    const r = parseConfig({
      fileText: 'receiver:\n  max_http_connections: 100\n  max_grpc_connections: 50\nquerier:\n  max_connections: 20\n',
      env: {},
    });
    assert.ok(r.ok);
    assert.equal(r.value.receiver.maxHttpConnections, 100);
    assert.equal(r.value.receiver.maxGrpcConnections, 50);
    assert.equal(r.value.querier.maxConnections, 20);
    const bad = issuesOf('querier:\n  max_connections: 0\n');
    assert.equal(bad[0]!.path, 'querier.max_connections');
    assert.match(bad[0]!.message, /must be an integer >= 1/);
  });
});
