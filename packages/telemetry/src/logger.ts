/**
 * @module logger
 * A tiny structured logger: one JSON object per line on stderr, for startup lines and errors. It never throws —
 * a field that cannot be serialized is replaced, not allowed to take down the caller.
 *
 * Line shape: `{"time":"<ISO 8601>","level":"info|warn|error","logger":"<name>","msg":"…","fields":{…}}`; `fields`
 * is omitted when empty. Fields are nested so that they can never overwrite `time`, `level`, `logger` or `msg`.
 */

/** Severity of a log line. */
export type LogLevel = 'info' | 'warn' | 'error';

/** Structured context of a log line. `Error` values are expanded to name, message, code, stack and cause. */
export type LogFields = Readonly<Record<string, unknown>>;

/** Writes structured lines under one logger name. */
export interface Logger {
  /** The name every line carries as `logger`. */
  readonly name: string;
  /** Normal operation worth a line (startup, resolved settings). */
  info(msg: string, fields?: LogFields): void;
  /** Something degraded or suspicious that the process survives. */
  warn(msg: string, fields?: LogFields): void;
  /** A failure an operator should look at. */
  error(msg: string, fields?: LogFields): void;
}

/** Injection points, for tests; production uses the defaults. */
export interface LoggerOptions {
  /** Receives each complete line, newline included. Default: `process.stderr.write`. */
  readonly write?: (line: string) => void;
  /** Clock for the `time` field. Default: `() => new Date()`. */
  readonly now?: () => Date;
}

/**
 * Creates a logger that writes one JSON line per event.
 * @param name - the component, e.g. `receiver` or `server`.
 * @example
 * const log = createLogger('server');
 * log.info('listening', { addr: '0.0.0.0:4318' });
 * // {"time":"2026-12-01T00:00:00.000Z","level":"info","logger":"server","msg":"listening","fields":{"addr":"0.0.0.0:4318"}}
 */
export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const now = options.now ?? (() => new Date());
  const emit = (level: LogLevel, msg: string, fields?: LogFields): void => {
    try {
      write(formatLine(now(), level, name, msg, fields) + '\n');
    } catch {
      // A broken stderr must not turn a log call into a crash.
    }
  };
  return {
    name,
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  };
}

function formatLine(time: Date, level: LogLevel, logger: string, msg: string, fields: LogFields | undefined): string {
  const line: Record<string, unknown> = { time: isoTime(time), level, logger, msg };
  if (fields !== undefined && Object.keys(fields).length > 0) line['fields'] = toJsonSafe(fields, new WeakSet());
  try {
    return JSON.stringify(line);
  } catch {
    return JSON.stringify({ ...line, fields: '[unserializable]' });
  }
}

function isoTime(d: Date): string {
  return Number.isNaN(d.getTime()) ? String(d) : d.toISOString();
}

/** Converts a value into something `JSON.stringify` renders faithfully and cannot throw on (cycles, bigint, Error). */
function toJsonSafe(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message };
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) out['code'] = toJsonSafe(code, seen);
    if (value.stack !== undefined) out['stack'] = value.stack;
    if (value.cause !== undefined) out['cause'] = toJsonSafe(value.cause, seen);
    return out;
  }
  if (value instanceof Date) return isoTime(value);
  if (Array.isArray(value)) return value.map((v) => toJsonSafe(v, seen) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = toJsonSafe(v, seen);
  return out;
}
