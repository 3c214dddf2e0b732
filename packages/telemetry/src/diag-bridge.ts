/**
 * @module diag-bridge
 * Routes OpenTelemetry SDK diagnostics (`diag`), at warn level and above, into a Sluice {@link Logger}. Without
 * it the SDK is silent, so a failing OTLP metrics push would go unnoticed. `diag` is process-global: one bridge per
 * process, installed by `createTelemetry` when given a logger.
 */
import { diag, DiagLogLevel } from '@opentelemetry/api';
import type { DiagLogger } from '@opentelemetry/api';
import type { Logger } from './logger.js';

/** Installs the bridge; returns a function that removes it (`diag.disable()`). */
export function installDiagBridge(logger: Logger): () => void {
  const forward =
    (level: 'warn' | 'error') =>
    (message: string, ...args: unknown[]): void => {
      const { msg, error } = unwrapStringifiedError(message);
      const fields: Record<string, unknown> = {};
      if (error !== undefined) fields['error'] = error;
      if (args.length > 0) fields['args'] = args;
      logger[level](`opentelemetry: ${msg}`, fields);
    };
  const noop = (): void => {};
  const bridge: DiagLogger = { error: forward('error'), warn: forward('warn'), info: noop, debug: noop, verbose: noop };
  diag.setLogger(bridge, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return () => diag.disable();
}

/**
 * The SDK's global error handler passes exceptions to `diag.error` as a JSON string (`{"stack","message","name"}`);
 * lift the message into the line and keep the rest as a field, instead of a stack trace inside `msg`.
 */
function unwrapStringifiedError(message: string): { msg: string; error?: unknown } {
  if (!message.startsWith('{')) return { msg: message };
  try {
    const parsed: unknown = JSON.parse(message);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { message?: unknown }).message === 'string'
    ) {
      return { msg: (parsed as { message: string }).message, error: parsed };
    }
  } catch {
    // not JSON after all
  }
  return { msg: message };
}
