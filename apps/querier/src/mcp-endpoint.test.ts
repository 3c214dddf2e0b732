/**
 * The query listener's surface, in process over a real socket (the hono app on @hono/node-server), with a
 * recording query service: MCP runs every tool for the tenant the gate admitted (the header), a `tenant`
 * argument can only repeat it; `GET /mcp` opens no stream; every MCP and `/v1/query` error is in our words,
 * naming the field and the type it must have — never the SDK's validation text.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createAccessGate } from '@sluice/edge';
import { sanitizeOutgoing } from './mcp-endpoint.js';
import { createQueryApp } from './query-app.js';
import type { QueryService, ServiceOutcome } from './query-service.js';
import type { QueryJobKind } from './worker-protocol.js';

interface Call {
  readonly tenant: string;
  readonly job: QueryJobKind;
}

const calls: Call[] = [];
const service: QueryService = {
  run(tenant, job): Promise<ServiceOutcome> {
    calls.push({ tenant, job });
    const body = new TextEncoder().encode(JSON.stringify({ tenant, job: job.kind }));
    return Promise.resolve({ status: 'ok', body, rows: 0, done: () => undefined });
  },
};

let server: ServerType;
let url: string;

before(async () => {
  const app = createQueryApp({
    service,
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve('') },
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    }),
    mcpEnabled: true,
    maxRows: 10_000,
    version: 'test',
  });
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
});

async function client(tenant: string): Promise<Client> {
  const c = new Client({ name: 'surface-test', version: '1' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { 'X-Sluice-Tenant': tenant } },
    }),
  );
  return c;
}

async function refused(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof McpError, `expected an McpError, got ${String(e)}`);
    return e;
  }
  assert.fail('the call was not refused');
}

const rpcHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'X-Sluice-Tenant': 'a',
};

interface RpcAnswer {
  readonly status: number;
  readonly text: string;
  readonly error: { code: number; message: string; data?: { kind?: string } } | undefined;
}

async function rpc(body: string, headers: Record<string, string> = rpcHeaders): Promise<RpcAnswer> {
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body });
  const text = await res.text();
  let error: RpcAnswer['error'];
  try {
    error = (JSON.parse(text) as { error?: RpcAnswer['error'] }).error;
  } catch {
    error = undefined;
  }
  return { status: res.status, text, error };
}

const call = (params: unknown, id: unknown = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });

/** Phrases of the SDK's and zod's own messages; none may reach a client. */
const LIBRARY_TEXT = [
  /Invalid (tools\/call )?request/i,
  /Parse error/,
  /Method not found/,
  /MCP error/,
  /invalid_type/,
  /\bExpected\b/,
  /\bRequired\b/,
  /zod/i,
  /"path"\s*:/,
  /Bad Request/,
  /Not Acceptable/,
  /Unsupported Media Type/,
];

function assertOurWords(answer: RpcAnswer, what: string): void {
  for (const re of LIBRARY_TEXT) assert.doesNotMatch(answer.text, re, `${what}: library text in ${answer.text}`);
  assert.ok(answer.error !== undefined, `${what}: a JSON-RPC error body, got ${answer.text}`);
  assert.equal(typeof answer.error.data?.kind, 'string', `${what}: data.kind is set`);
}

describe('MCP tenant rule (the tenant comes from the header)', () => {
  test('tools run for the header tenant; the compatibility tenant argument may only repeat it', async () => {
    const c = await client('a');
    try {
      calls.length = 0;
      await c.callTool({ name: 'query_logs', arguments: { query: 'true' } });
      await c.callTool({ name: 'query_logs', arguments: { query: 'true', tenant: 'a' } });
      await c.callTool({ name: 'list_templates', arguments: {} });
      await c.callTool({ name: 'template_drift', arguments: { from: '-1h', to: 'now' } });
      assert.deepEqual(
        calls.map((x) => x.tenant),
        ['a', 'a', 'a', 'a'],
      );
      calls.length = 0;
      for (const [name, args] of [
        ['query_logs', { query: 'true', tenant: 'ab' }],
        ['list_templates', { tenant: 'ab' }],
        ['template_drift', { from: '-1h', to: 'now', tenant: 'ab' }],
        ['query_logs', { query: 'true', tenant: 'A' }],
      ] as const) {
        const e = await refused(c.callTool({ name, arguments: args }));
        assert.equal(e.code, -32600, name);
        assert.deepEqual(e.data, { kind: 'tenant_denied', retryable: false }, name);
        assert.match(e.message, /is not this request's tenant/);
      }
      assert.equal(calls.length, 0, 'a refused call never reaches the query service');
    } finally {
      await c.close();
    }
  });

  test('tools/list advertises tenant as optional on every tool', async () => {
    const c = await client('a');
    try {
      const { tools } = await c.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['list_templates', 'query_logs', 'template_drift']);
      for (const t of tools) {
        assert.ok(!(t.inputSchema.required ?? []).includes('tenant'), `${t.name} does not require tenant`);
        assert.ok(t.inputSchema.properties?.['tenant'] !== undefined, `${t.name} still accepts tenant`);
      }
    } finally {
      await c.close();
    }
  });

  test('without the header (and no default tenant) /mcp is 400 missing_tenant before any MCP dispatch', async () => {
    const { 'X-Sluice-Tenant': _omit, ...headers } = rpcHeaders;
    const answer = await rpc(call({ name: 'list_templates' }), headers);
    assert.equal(answer.status, 400);
    assert.equal(JSON.parse(answer.text).error.kind, 'missing_tenant');
  });
});

describe('GET /mcp opens no stream', () => {
  test('GET and DELETE answer 405 with Allow: POST at once, and the response ends', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${url}/mcp`, {
        method,
        headers: { accept: 'text/event-stream', 'X-Sluice-Tenant': 'a' },
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.match(await res.text(), /stateless and offers no SSE stream/);
    }
  });
});

describe('MCP errors are in our words, naming the field and the type', () => {
  const cases: [string, string, RegExp, Record<string, string>?][] = [
    [
      'query given as a list',
      call({ name: 'query_logs', arguments: { query: ['true'] } }),
      /argument 'query' must be a string, got a list/,
    ],
    ['query missing', call({ name: 'query_logs', arguments: {} }), /argument 'query' is required: a string/],
    [
      'limit negative',
      call({ name: 'query_logs', arguments: { query: 'true', limit: -1 } }),
      /argument 'limit' must be an integer >= 0, got an integer/,
    ],
    [
      'limit as text',
      call({ name: 'query_logs', arguments: { query: 'true', limit: '5' } }),
      /argument 'limit' must be an integer >= 0, got a string/,
    ],
    [
      'limit fractional',
      call({ name: 'query_logs', arguments: { query: 'true', limit: 1.5 } }),
      /argument 'limit' must be an integer >= 0, got a number/,
    ],
    [
      'tenant as a number',
      call({ name: 'list_templates', arguments: { tenant: 7 } }),
      /argument 'tenant' must be a string, got an integer/,
    ],
    [
      'unknown argument',
      call({ name: 'query_logs', arguments: { query: 'true', tenants: 'ab' } }),
      /unknown argument 'tenants' for query_logs; its arguments are 'query', 'limit', 'timeout_ms', 'tenant'/,
    ],
    [
      'unknown tool',
      call({ name: 'drop_tables', arguments: {} }),
      /unknown tool 'drop_tables'; the tools are query_logs, list_templates, template_drift/,
    ],
    [
      'arguments as a list',
      call({ name: 'query_logs', arguments: ['true'] }),
      /params\.arguments of tools\/call must be a mapping of argument names to values, got a list/,
    ],
    [
      'arguments as text',
      call({ name: 'query_logs', arguments: 'true' }),
      /params\.arguments of tools\/call must be a mapping .*, got a string/,
    ],
    ['tool name missing', call({ arguments: {} }), /params\.name of tools\/call is required \(a string\)/],
    ['params as a list', call([1]), /params of tools\/call must be a mapping, got a list/],
    ['a DSL error', call({ name: 'query_logs', arguments: { query: 'severity >= | count' } }), /./],
    [
      'unknown method',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }),
      /method 'resources\/list' is not offered; this server answers initialize, ping, tools\/list, tools\/call/,
    ],
    [
      'initialize without clientInfo',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {} },
      }),
      /params\.clientInfo of initialize is required \(a mapping\)/,
    ],
    [
      'initialize with a numeric client name',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 1, version: '1' } },
      }),
      /params\.clientInfo\.name of initialize must be a string, got an integer/,
    ],
    ['not JSON', '{"jsonrpc": "2.0",', /the request body is not valid JSON/],
    ['no jsonrpc member', JSON.stringify({ id: 1, method: 'tools/list' }), /the message: "jsonrpc" must be "2.0"/],
    [
      'an object id',
      JSON.stringify({ jsonrpc: '2.0', id: {}, method: 'tools/list' }),
      /"id" must be a string or an integer, got a mapping/,
    ],
    [
      'a numeric method',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 5 }),
      /"method" must be a string, got an integer/,
    ],
    ['an empty batch', '[]', /a batch must hold 1 to 100 messages, got 0/],
    [
      'a batch with a bad request',
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5 } },
      ]),
      /message 1: params\.name of tools\/call must be a string, got an integer/,
    ],
    [
      'a progress token of the wrong type',
      call({ name: 'list_templates', _meta: { progressToken: {} } }),
      /params\._meta\.progressToken of tools\/call must be a string or an integer, got a mapping/,
    ],
    [
      'a task-augmented call',
      call({ name: 'list_templates', task: { ttl: 1000 } }),
      /params\.task of tools\/call: task-augmented calls are not supported; omit it/,
    ],
    [
      'Accept without event-stream',
      call({ name: 'list_templates' }),
      /the Accept header must list both application\/json and text\/event-stream/,
      { ...rpcHeaders, accept: 'application/json' },
    ],
    [
      'a text body',
      call({ name: 'list_templates' }),
      /the Content-Type must be application\/json/,
      { ...rpcHeaders, 'content-type': 'text/plain' },
    ],
    [
      'an unknown protocol version',
      call({ name: 'list_templates' }),
      /MCP-Protocol-Version "1999-01-01" is not supported; use one of/,
      { ...rpcHeaders, 'mcp-protocol-version': '1999-01-01' },
    ],
    [
      'a body over 1 MiB',
      call({ name: 'query_logs', arguments: { query: 'x'.repeat(1_100_000) } }),
      /request body exceeds 1048576 bytes/,
    ],
  ];
  for (const [what, body, message, headers] of cases) {
    test(what, async () => {
      calls.length = 0;
      const answer = await rpc(body, headers);
      assertOurWords(answer, what);
      assert.match(answer.error!.message, message, what);
      if (what !== 'a DSL error') assert.equal(calls.length, 0, 'never reaches the query service');
    });
  }

  test('backstop: an error the SDK makes itself (no data.kind of ours) leaves in our words', () => {
    const sdkMade = [
      { code: -32603, message: 'Invalid tools/call request: [{"code":"invalid_type","path":["params","task"]}]' },
      { code: -32602, message: 'MCP error -32602: Invalid arguments' },
      { code: -32601, message: 'Method not found' },
      { code: -32700, message: 'Parse error: Invalid JSON-RPC message' },
    ];
    for (const error of sdkMade) {
      const out = sanitizeOutgoing({ jsonrpc: '2.0', id: 3, error } as JSONRPCMessage) as {
        id: number;
        error: RpcAnswer['error'];
      };
      const answer = { status: 200, text: JSON.stringify(out), error: out.error };
      assertOurWords(answer, error.message);
      assert.equal(out.id, 3);
      assert.equal(out.error!.code, error.code === -32603 ? -32603 : error.code);
    }
    const ours = {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'argument x', data: { kind: 'invalid_query' } },
    };
    assert.deepEqual(sanitizeOutgoing(ours as JSONRPCMessage), ours, 'our own errors pass unchanged');
  });

  test('/v1/query {"query": ["true"]} names the field and the type', async () => {
    const res = await fetch(`${url}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'a' },
      body: JSON.stringify({ query: ['true'] }),
    });
    assert.equal(res.status, 400);
    const error = ((await res.json()) as { error: { kind: string; message: string } }).error;
    assert.equal(error.kind, 'invalid_query');
    assert.match(error.message, /"query" must be a string \(a DSL statement\), got a list/);
  });
});
