/**
 * @module probes.test
 * The probe answers every HTTP listener gives (the OTLP/HTTP listener and the query listener both write out
 * `answerProbe`), including how a failing readiness check or metrics collection is answered.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerProbe, type Probes } from './probes.js';

const probes = (over: Partial<Probes> = {}): Probes => ({
  notReadyReason: () => null,
  metricsText: () => Promise.resolve('# HELP x\nx 1\n'),
  ...over,
});

describe('answerProbe', () => {
  test('a path that is not a probe is left to the listener', () => {
    assert.equal(answerProbe('GET', '/v1/logs', probes()), null);
    assert.equal(answerProbe('GET', '/healthz/', probes()), null);
    assert.equal(answerProbe('GET', '/', probes()), null);
  });

  test('/healthz answers 200 ok as plain text', async () => {
    const r = await answerProbe('GET', '/healthz', probes())!;
    assert.equal(r.status, 200);
    assert.equal(r.body, 'ok\n');
    assert.match(r.headers['content-type']!, /^text\/plain/);
  });

  test('/readyz answers 200 when ready and 503 naming the reason when not', async () => {
    assert.deepEqual(await answerProbe('GET', '/readyz', probes()), {
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'ready\n',
    });
    const r = await answerProbe('GET', '/readyz', probes({ notReadyReason: () => 'WAL replay in progress' }))!;
    assert.equal(r.status, 503);
    assert.equal(r.body, 'not ready: WAL replay in progress\n');
  });

  test('a readiness check that throws answers 503 (not ready) without the error text', async () => {
    const r = await answerProbe(
      'GET',
      '/readyz',
      probes({
        notReadyReason: () => {
          throw new Error('ENOENT: internal detail');
        },
      }),
    )!;
    assert.equal(r.status, 503);
    assert.equal(r.body, 'not ready: the readiness check failed\n');
  });

  test('/metrics answers the Prometheus text with its content type, or 404 when Prometheus is disabled', async () => {
    const r = await answerProbe('GET', '/metrics', probes())!;
    assert.equal(r.status, 200);
    assert.equal(r.body, '# HELP x\nx 1\n');
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const off = await answerProbe('GET', '/metrics', probes({ metricsText: () => Promise.resolve(null) }))!;
    assert.equal(off.status, 404);
    assert.equal(off.body, 'prometheus metrics are disabled\n');
  });

  test('a metrics collection that rejects or throws answers 500 as plain text without the error text', async () => {
    for (const metricsText of [
      () => Promise.reject(new Error('exporter internals')),
      () => {
        throw new Error('sampler internals');
      },
    ]) {
      const r = await answerProbe('GET', '/metrics', probes({ metricsText }))!;
      assert.equal(r.status, 500);
      assert.equal(r.body, 'metrics unavailable\n');
      assert.match(r.headers['content-type']!, /^text\/plain/);
    }
  });

  test('/metrics asks authorizeMetrics first: a refusal is 401 with the challenge and nothing is collected', async () => {
    let collected = 0;
    const counting = probes({
      metricsText: () => {
        collected++;
        return Promise.resolve('x 1\n');
      },
    });
    const refuse = () => ({ message: 'a token for the admin surface is required', challenge: 'Bearer realm="sluice"' });
    const r = await answerProbe('GET', '/metrics', counting, { authorizeMetrics: refuse })!;
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Bearer realm="sluice"');
    assert.equal(r.body, 'a token for the admin surface is required\n');
    assert.equal(collected, 0);
    const ok = await answerProbe('GET', '/metrics', counting, { authorizeMetrics: () => null })!;
    assert.equal(ok.status, 200);
    assert.equal(collected, 1);
    // The other probes never ask.
    const health = await answerProbe('GET', '/healthz', counting, { authorizeMetrics: refuse })!;
    assert.equal(health.status, 200);
  });

  test('HEAD is served like GET; any other method is 405 with Allow', async () => {
    const head = await answerProbe('HEAD', '/readyz', probes())!;
    assert.equal(head.status, 200);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await answerProbe(method, '/healthz', probes())!;
      assert.equal(r.status, 405);
      assert.equal(r.headers.allow, 'GET, HEAD');
    }
  });
});
