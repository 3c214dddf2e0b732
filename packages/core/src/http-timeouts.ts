/**
 * Idle keep-alive timeout of every Sluice HTTP listener (OTLP/HTTP, `/v1/query`, MCP), in milliseconds.
 *
 * Node's default (5 s) sits just above common client defaults (undici's 4 s), so under event-loop lag a client
 * reuses a socket the server is closing and the request fails with "other side closed" before it was sent —
 * measured in the cgroup soak as failed query requests. Load balancers keep idle upstream connections for up to
 * 60 s (AWS ALB default), and the server must outlive them, so the server waits 65 s; clients honour the
 * `Keep-Alive: timeout=65` hint the server sends and close first.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 65_000;
