/**
 * @module ingest-service
 * One export, surface-independent: validate, append to the WAL under the tenant the access gate admitted, and wait
 * for the group-commit fdatasync that covers it. Only then is the outcome `accepted` — ack means durable. The
 * surfaces run the gate (token, tenant) before they read the body.
 *
 * A protobuf export is only walked here (the decoder's exact wire rules, no records built): the sink decodes the
 * WAL copy once, so the ack path does not pay for a decode whose objects it would throw away (docs/design/architecture.md,
 * step 2). OTLP/JSON is parsed here, since a JSON body cannot be checked without parsing it.
 */
import type { Result } from '@sluice/core';
import { ok } from '@sluice/core';
import { decodeLogsJson, validateLogsProtobuf } from '@sluice/otlp';
import type { IngestOutcome, IngestProtocol } from './ingest-outcome.js';
import { encodeWalExport } from '@sluice/sink';

/** What the service needs from the WAL: an append that resolves once durable. */
export interface WalAppender {
  append(payload: Uint8Array): Promise<unknown>;
}

/** Observations the service reports (metrics live in the composition root). */
export interface IngestObserver {
  accepted(protocol: IngestProtocol, tenant: string, records: number, bytes: number, walSeconds: number): void;
  refused(protocol: IngestProtocol, outcome: IngestOutcome): void;
}

/** Options for {@link createIngestService}. */
export interface IngestServiceOptions {
  readonly wal: WalAppender;
  /** Returns a reason when ingest must answer "busy, retry" (WAL backlog over its cap, shutting down). */
  readonly busyReason: () => string | null;
  /** Cap on decompressed bytes waiting for their WAL fsync at once (`receiver.limits.max_inflight_bytes`). */
  readonly maxInflightBytes: number;
  /**
   * The disk guard: returns a reason when the WAL volume cannot take an export of `bytes` (free space below
   * `receiver.limits.min_free_disk_percent`); the export is then refused `disk_low` before it is written.
   */
  readonly diskLow?: (bytes: number) => string | null;
  readonly observer?: IngestObserver;
}

/** The surface-independent ingest entry point. */
export interface IngestService {
  /**
   * Ingests one decompressed export body.
   * @param tenant the tenant the access gate admitted the request to.
   */
  ingest(protocol: IngestProtocol, tenant: string, body: Uint8Array): Promise<IngestOutcome>;
  /** Records a refusal decided by the surface before the body reached the service (401, 403, 413, 415, bad gzip). */
  refuse(protocol: IngestProtocol, outcome: IngestOutcome): IngestOutcome;
}

/** The in-flight bodies budget of an ingest service (the composition root reads it; the surfaces need not). */
export interface InflightBudget {
  /** Decompressed bytes waiting for their WAL fsync now, and the most at once since the service was created. */
  inflightFigures(): { readonly used: number; readonly peak: number };
}

/** Seconds a client should wait before retrying a transient refusal. */
const RETRY_AFTER_SECS = 1;

/** Creates the ingest service. */
export function createIngestService(options: IngestServiceOptions): IngestService & InflightBudget {
  const { wal, busyReason, observer, maxInflightBytes } = options;
  // Bytes handed to the WAL and not yet durable: this bounds the WAL's in-memory append queue.
  let inflightBytes = 0;
  let inflightPeak = 0;
  const refuse = (protocol: IngestProtocol, outcome: IngestOutcome): IngestOutcome => {
    observer?.refused(protocol, outcome);
    return outcome;
  };
  return {
    refuse,
    inflightFigures: () => ({ used: inflightBytes, peak: inflightPeak }),
    async ingest(protocol, tenant, body) {
      const finish = (outcome: IngestOutcome): IngestOutcome => refuse(protocol, outcome);
      const encoding = protocol === 'http_json' ? 'json' : 'protobuf';
      const checked = encoding === 'protobuf' ? validateLogsProtobuf(body) : countJsonRecords(body);
      if (!checked.ok) return finish({ status: 'invalid', message: checked.error.message });
      const records = checked.value;
      // An empty export is a success with nothing to make durable.
      if (records === 0) return { status: 'accepted', records: 0 };
      const busy =
        busyReason() ??
        (inflightBytes > 0 && inflightBytes + body.length > maxInflightBytes
          ? 'too many export bytes are waiting for the write-ahead log (receiver.limits.max_inflight_bytes); retry'
          : null);
      if (busy !== null) return finish({ status: 'unavailable', message: busy, retryAfterSecs: RETRY_AFTER_SECS });
      // Last of the checks, since admitting counts the bytes against the free space until the next sample.
      const low = options.diskLow?.(body.length) ?? null;
      if (low !== null) return finish({ status: 'disk_low', message: low, retryAfterSecs: RETRY_AFTER_SECS });
      const started = performance.now();
      inflightBytes += body.length;
      if (inflightBytes > inflightPeak) inflightPeak = inflightBytes;
      try {
        await wal.append(encodeWalExport(tenant, encoding, body));
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'WAL_FRAME_TOO_LARGE') {
          return finish({ status: 'too_large', message: 'export is larger than the WAL frame limit' });
        }
        if (code === 'WAL_FENCED') {
          // Refused before anything was written; /readyz names the fence, the log has the errno and the file.
          return finish({
            status: 'unavailable',
            message: 'the write-ahead log is fenced after a disk error and refuses exports until it recovers; retry',
            retryAfterSecs: RETRY_AFTER_SECS,
          });
        }
        return finish({
          status: 'unavailable',
          message: 'the write-ahead log could not make the export durable; retry',
          retryAfterSecs: RETRY_AFTER_SECS,
        });
      } finally {
        inflightBytes -= body.length;
      }
      observer?.accepted(protocol, tenant, records, body.length, (performance.now() - started) / 1000);
      return { status: 'accepted', records };
    },
  };
}

/** Parses an OTLP/JSON export for its record count (the parse is the validation). */
function countJsonRecords(body: Uint8Array): Result<number, { message: string }> {
  const decoded = decodeLogsJson(body);
  return decoded.ok ? ok(decoded.value.length) : decoded;
}
