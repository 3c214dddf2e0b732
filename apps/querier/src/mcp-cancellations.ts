/**
 * @module mcp-cancellations
 * MCP request cancellation in stateless mode. A client cancels a request with a `notifications/cancelled`
 * notification naming its request id, but a stateless endpoint receives that notification on another HTTP
 * request, where the server instance that runs the call does not exist. So the endpoint keeps the tool calls in
 * flight, by tenant and request id, and a cancellation aborts the matching call, which stops its query like a
 * client disconnect does (docs/design/query-governance.md, "Deadlines and cancellation").
 *
 * Request ids are chosen by clients and are only unique per session; keying by tenant as well means one tenant
 * can never cancel another's query. Two clients of one tenant that reuse an id can cancel each other's call;
 * that costs a retry, never data.
 */

/** The tool calls in flight. */
export interface McpCancellations {
  /**
   * Registers a call under `tenant` and each of `ids`; the returned signal aborts when the HTTP request's
   * `signal` does or a matching cancellation arrives. Call `done()` when the call has been answered.
   */
  track(
    tenant: string,
    ids: readonly (string | number)[],
    signal: AbortSignal,
  ): { readonly signal: AbortSignal; done(): void };
  /** Aborts the calls of `tenant` registered under `requestId`. @returns how many were aborted. */
  cancel(tenant: string, requestId: string | number): number;
  /** Calls registered now (for tests). */
  size(): number;
}

function keyOf(tenant: string, id: string | number): string {
  // JSON keeps 1 and "1" apart, as JSON-RPC does.
  return `${tenant}\u0000${JSON.stringify(id)}`;
}

/** Creates an empty registry (one per query app). */
export function createMcpCancellations(): McpCancellations {
  const calls = new Map<string, Set<AbortController>>();
  return {
    track(tenant, ids, signal) {
      const controller = new AbortController();
      const onAbort = (): void => controller.abort();
      if (signal.aborted) controller.abort();
      else signal.addEventListener('abort', onAbort, { once: true });
      const keys = ids.map((id) => keyOf(tenant, id));
      for (const key of keys) {
        let set = calls.get(key);
        if (set === undefined) calls.set(key, (set = new Set()));
        set.add(controller);
      }
      return {
        signal: controller.signal,
        done() {
          signal.removeEventListener('abort', onAbort);
          for (const key of keys) {
            const set = calls.get(key);
            set?.delete(controller);
            if (set?.size === 0) calls.delete(key);
          }
        },
      };
    },
    cancel(tenant, requestId) {
      const set = calls.get(keyOf(tenant, requestId));
      if (set === undefined) return 0;
      for (const controller of set) controller.abort();
      return set.size;
    },
    size: () => [...calls.values()].reduce((n, s) => n + s.size, 0),
  };
}
