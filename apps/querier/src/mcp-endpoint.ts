/**
 * @module mcp-endpoint
 * `/mcp`: MCP over streamable HTTP in stateless mode (one server and transport per HTTP request, JSON responses).
 *
 * - **No standalone SSE stream.** A stateless server has nothing to push outside a request, so `GET /mcp` (and
 *   `DELETE`) answer 405 with `Allow: POST`, which the MCP streamable-HTTP specification allows and MCP clients
 *   handle. An open-ended stream per GET is what exhausted file handles before (docs/security.md).
 * - **Errors in our words only.** The HTTP-level checks (method, Accept, Content-Type, protocol version, body
 *   size, JSON, JSON-RPC shape, method parameters) run here, before the SDK sees the request, each with a message
 *   that names the field and the type it must have. As a backstop, any error the SDK still produces (its own
 *   validation text) is rewritten before it leaves: a client never sees library text.
 *
 * The access gate has already admitted the request (401 / 400 / 403 are answered by the caller).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AccessGate, AccessGrant } from '@sluice/edge';
import type { McpCancellations } from './mcp-cancellations.js';
import { createMcpServer } from './mcp-server.js';
import { describeJson } from './mcp-arguments.js';
import {
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_INVALID_REQUEST,
  type QueryErrorKind,
} from './query-error.js';
import type { QueryService } from './query-service.js';
import { MAX_QUERY_BODY_BYTES, readLimitedBody } from './read-limited-body.js';

/** JSON-RPC codes used only here. */
const JSONRPC_PARSE_ERROR = -32700;
const JSONRPC_METHOD_NOT_FOUND = -32601;

/** Most messages in one JSON-RPC batch (the SDK's own bound). */
const MAX_BATCH_MESSAGES = 100;

/** The methods this server answers (requests); notifications are accepted and need no answer. */
const METHODS = ['initialize', 'ping', 'tools/list', 'tools/call'] as const;

/** Options for {@link handleMcpRequest}. */
export interface McpEndpointOptions {
  readonly service: QueryService;
  readonly maxRows: number;
  readonly version: string;
  readonly access: AccessGate;
  /** The tool calls in flight, so a `notifications/cancelled` on another request can stop one. */
  readonly cancellations: McpCancellations;
}

type Id = string | number | null;

interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data: { readonly kind: QueryErrorKind };
}

function rpcError(code: number, kind: QueryErrorKind, message: string): RpcError {
  return { code, message, data: { kind } };
}

function rpcResponse(status: number, id: Id, error: RpcError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const invalid = (message: string): RpcError => rpcError(JSONRPC_INVALID_REQUEST, 'invalid_query', message);
const badParams = (message: string): RpcError => rpcError(JSONRPC_INVALID_PARAMS, 'invalid_query', message);

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** `params._meta`, shared by every method: a mapping whose `progressToken`, if any, is a string or an integer. */
function checkMeta(method: string, meta: unknown): string | null {
  if (meta === undefined) return null;
  if (!isRecord(meta)) return `params._meta of ${method} must be a mapping, got ${describeJson(meta)}`;
  const token = meta['progressToken'];
  if (token !== undefined && !isId(token)) {
    return `params._meta.progressToken of ${method} must be a string or an integer, got ${describeJson(token)}`;
  }
  return null;
}

/** `params` of a known request method, checked in our words; `null` when they fit. */
function checkParams(method: string, params: unknown): string | null {
  if (params !== undefined && !isRecord(params))
    return `params of ${method} must be a mapping, got ${describeJson(params)}`;
  const p = params ?? {};
  const field = (name: string, want: 'string' | 'mapping', required: boolean): string | null => {
    const value = p[name];
    const wanted = want === 'string' ? 'a string' : 'a mapping';
    if (value === undefined) return required ? `params.${name} of ${method} is required (${wanted})` : null;
    const fits = want === 'string' ? typeof value === 'string' : isRecord(value);
    return fits ? null : `params.${name} of ${method} must be ${wanted}, got ${describeJson(value)}`;
  };
  const meta = checkMeta(method, p['_meta']);
  if (meta !== null) return meta;
  switch (method) {
    case 'initialize': {
      const problem =
        field('protocolVersion', 'string', true) ??
        field('capabilities', 'mapping', true) ??
        field('clientInfo', 'mapping', true);
      if (problem !== null) return problem;
      const info = p['clientInfo'] as Readonly<Record<string, unknown>>;
      for (const name of ['name', 'version']) {
        if (typeof info[name] !== 'string') {
          return `params.clientInfo.${name} of initialize must be a string, got ${describeJson(info[name])}`;
        }
      }
      return null;
    }
    case 'tools/list':
      return field('cursor', 'string', false);
    case 'tools/call': {
      const problem = field('name', 'string', true);
      if (problem !== null) return problem;
      if (p['task'] !== undefined) return 'params.task of tools/call: task-augmented calls are not supported; omit it';
      const args = p['arguments'];
      if (args !== undefined && !isRecord(args)) {
        return `params.arguments of tools/call must be a mapping of argument names to values, got ${describeJson(args)}`;
      }
      return null;
    }
    default:
      return null;
  }
}

/** The outcome of checking one message: fine, an error for its request id, or a malformed envelope. */
type Checked =
  | { readonly kind: 'ok' }
  | { readonly kind: 'answer'; readonly id: string | number; readonly error: RpcError }
  | { readonly kind: 'malformed'; readonly error: RpcError };

function checkMessage(message: unknown, at: string): Checked {
  if (!isRecord(message)) {
    return { kind: 'malformed', error: invalid(`${at} must be a JSON-RPC 2.0 object, got ${describeJson(message)}`) };
  }
  if (message['jsonrpc'] !== '2.0') return { kind: 'malformed', error: invalid(`${at}: "jsonrpc" must be "2.0"`) };
  const method = message['method'];
  const id = message['id'];
  if (method === undefined) {
    // A response to a server request: this server sends none, but accepting one is harmless.
    if (!isId(id) || (!('result' in message) && !('error' in message))) {
      return {
        kind: 'malformed',
        error: invalid(`${at} has no "method": a request needs "method" (a string) and "id"`),
      };
    }
    return { kind: 'ok' };
  }
  if (typeof method !== 'string') {
    return { kind: 'malformed', error: invalid(`${at}: "method" must be a string, got ${describeJson(method)}`) };
  }
  if (id === undefined) return { kind: 'ok' }; // a notification: never answered
  if (!isId(id)) {
    return { kind: 'malformed', error: invalid(`${at}: "id" must be a string or an integer, got ${describeJson(id)}`) };
  }
  if (!(METHODS as readonly string[]).includes(method)) {
    return {
      kind: 'answer',
      id,
      error: rpcError(
        JSONRPC_METHOD_NOT_FOUND,
        'invalid_query',
        `method '${method}' is not offered; this server answers ${METHODS.join(', ')}`,
      ),
    };
  }
  const problem = checkParams(method, message['params']);
  return problem === null ? { kind: 'ok' } : { kind: 'answer', id, error: badParams(problem) };
}

/** Our message for an error the SDK produced (its own text is dropped). */
function ourError(code: unknown): RpcError {
  switch (code) {
    case JSONRPC_PARSE_ERROR:
      return rpcError(JSONRPC_PARSE_ERROR, 'invalid_query', 'the request is not valid JSON-RPC');
    case JSONRPC_INVALID_REQUEST:
      return invalid('the request is not a valid MCP request');
    case JSONRPC_METHOD_NOT_FOUND:
      return rpcError(JSONRPC_METHOD_NOT_FOUND, 'invalid_query', `this server answers ${METHODS.join(', ')}`);
    case JSONRPC_INVALID_PARAMS:
      return badParams('the request parameters are not valid for this method');
    default:
      return rpcError(JSONRPC_INTERNAL_ERROR, 'internal', 'internal error');
  }
}

/**
 * Replaces an SDK-made error (one without a `data.kind` of ours) in an outgoing message with our words: the
 * backstop behind the checks above, for anything they did not anticipate.
 */
export function sanitizeOutgoing(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || !isRecord(message.error)) return message;
  const data = message.error['data'];
  if (isRecord(data) && typeof data['kind'] === 'string') return message;
  return { ...message, error: ourError(message.error['code']) } as JSONRPCMessage;
}

function wantsBoth(accept: string | null): boolean {
  const a = (accept ?? '').toLowerCase();
  return a.includes('application/json') && a.includes('text/event-stream');
}

/** Handles one admitted `/mcp` request. */
export async function handleMcpRequest(
  request: Request,
  grant: AccessGrant,
  options: McpEndpointOptions,
): Promise<Response> {
  if (request.method !== 'POST') {
    return new Response(
      'method not allowed: this MCP endpoint is stateless and offers no SSE stream; send JSON-RPC requests with POST\n',
      { status: 405, headers: { allow: 'POST', 'content-type': 'text/plain' } },
    );
  }
  if (!wantsBoth(request.headers.get('accept'))) {
    return rpcResponse(406, null, invalid('the Accept header must list both application/json and text/event-stream'));
  }
  const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json') {
    return rpcResponse(415, null, invalid('the Content-Type must be application/json'));
  }
  const version = request.headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return rpcResponse(
      400,
      null,
      invalid(
        `MCP-Protocol-Version ${JSON.stringify(version)} is not supported; use one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      ),
    );
  }
  const body = await readLimitedBody(request);
  if (body.status === 'too_large') {
    return rpcResponse(
      413,
      null,
      rpcError(JSONRPC_INVALID_PARAMS, 'request_too_large', `request body exceeds ${MAX_QUERY_BODY_BYTES} bytes`),
    );
  }
  if (body.status === 'invalid_utf8') return rpcResponse(400, null, invalid('the request body is not valid UTF-8'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch {
    return rpcResponse(400, null, rpcError(JSONRPC_PARSE_ERROR, 'invalid_query', 'the request body is not valid JSON'));
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  if (Array.isArray(parsed) && (parsed.length === 0 || parsed.length > MAX_BATCH_MESSAGES)) {
    return rpcResponse(
      400,
      null,
      invalid(`a batch must hold 1 to ${MAX_BATCH_MESSAGES} messages, got ${parsed.length}`),
    );
  }
  for (let i = 0; i < messages.length; i++) {
    const checked = checkMessage(messages[i], Array.isArray(parsed) ? `message ${i}` : 'the message');
    if (checked.kind === 'malformed') return rpcResponse(400, null, checked.error);
    if (checked.kind === 'answer') {
      // A single request is answered with its JSON-RPC error; a batch with one bad request is refused whole.
      if (!Array.isArray(parsed)) return rpcResponse(200, checked.id, checked.error);
      return rpcResponse(400, null, { ...checked.error, message: `message ${i}: ${checked.error.message}` });
    }
  }

  // Cancellations first: they may stop a call running on another request of this tenant.
  const callIds: (string | number)[] = [];
  for (const message of messages as Readonly<Record<string, unknown>>[]) {
    const params = message['params'];
    if (message['method'] === 'notifications/cancelled' && isRecord(params) && isId(params['requestId']))
      options.cancellations.cancel(grant.tenant, params['requestId']);
    if (message['method'] === 'tools/call' && isId(message['id'])) callIds.push(message['id']);
  }
  const tracked = options.cancellations.track(grant.tenant, callIds, request.signal);
  try {
    return await serveMessages(request, parsed, grant, options, tracked.signal);
  } finally {
    tracked.done();
  }
}

/** Runs the checked messages through a fresh stateless MCP server; `signal` stops its tool calls. */
async function serveMessages(
  request: Request,
  parsed: unknown,
  grant: AccessGrant,
  options: McpEndpointOptions,
  signal: AbortSignal,
): Promise<Response> {
  const server = createMcpServer(
    { service: options.service, maxRows: options.maxRows, version: options.version, grant, access: options.access },
    signal,
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_QUERY_BODY_BYTES,
  });
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => send(sanitizeOutgoing(message), sendOptions);
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody: parsed });
  if (response.status < 400) return response;
  // Backstop: a transport-level refusal the checks above did not anticipate, in our words.
  return rpcResponse(response.status, null, invalid(`the MCP request was refused (HTTP ${response.status})`));
}
