/**
 * @module create-receiver
 * The receiver role: WAL recovery, the sink worker (replay, mining, Parquet), and the OTLP listeners, wired
 * together. Start order makes replay safe: the WAL is recovered before any listener opens, and the sink starts
 * from the last checkpoint. Stop order makes shutdown lossless: stop accepting, finish in-flight exports,
 * fsync the WAL, then let the sink flush everything and checkpoint.
 */
import type { AddressInfo } from 'node:net';
import { splitHostPort, type SluiceConfig } from '@sluice/config';
import {
  compareWalPositions,
  openWal,
  readCheckpoint,
  type Wal,
  type WalFilePort,
  type WalPosition,
} from '@sluice/wal';
import { createIngestService, type IngestObserver } from './ingest-service.js';
import { createOtlpGrpcServer, type OtlpGrpcServer } from './otlp-grpc-server.js';
import { createOtlpHttpServer, type OtlpHttpServer } from './otlp-http-server.js';
import type { Probes } from '@sluice/core';
import type { AccessGate, ConnectionCap } from '@sluice/edge';
import { startSink, type Sink, type SinkObserver } from './sink.js';
import { createDiskGuard, type DiskGuardObserver } from './disk-guard.js';
import { createReadiness } from './readiness.js';
import { trackWalBacklog } from './backlog-budget.js';
import { storageSettingsFrom } from '@sluice/storage';
import { walNotReadyReason, type WalObserver } from './wal-health.js';

/** What the receiver needs from its composition root. */
export interface ReceiverDeps {
  /** Probe endpoints served on the OTLP/HTTP listener (the process-wide view). */
  readonly probes: Probes;
  /** The process's access gate (tokens, tenant rule), shared with every other surface. */
  readonly access: AccessGate;
  /** Connection caps of the two listeners (`receiver.max_http_connections`, `receiver.max_grpc_connections`). */
  readonly connectionCaps: { readonly http: ConnectionCap; readonly grpc: ConnectionCap };
  /**
   * The resolved `receiver.sink.ceiling_bytes`: the configured value, or the one derived from the memory limit
   * (`planMemory` in `@sluice/limits`, docs/deployment.md "Sizing the sink ceiling").
   */
  readonly sinkCeilingBytes: number;
  readonly ingestObserver?: IngestObserver;
  readonly sinkObserver?: SinkObserver;
  /** Told when the WAL fences after an I/O failure and when it resumes. */
  readonly walObserver?: WalObserver;
  /** The WAL writer's file operations; default the real file system (tests inject faults here). */
  readonly walFilePort?: WalFilePort;
  /** Hears the disk guard trip and clear (`receiver.limits.min_free_disk_percent`). */
  readonly diskGuardObserver?: DiskGuardObserver;
}

/** One managed budget's figures, in bytes (docs/deployment.md, "The budget tree"). */
export interface BudgetFigures {
  readonly used: number;
  /** The most it has held since the receiver started. */
  readonly peak: number;
  readonly limit: number;
}

/** The receiver's managed budgets. */
export interface ReceiverBudgets {
  /** Rows buffered by the sink, against the resolved `receiver.sink.ceiling_bytes`. */
  readonly sinkBuffers: BudgetFigures;
  /** Export bodies awaiting their WAL fsync, against `receiver.limits.max_inflight_bytes`. */
  readonly inflightBodies: BudgetFigures;
  /** WAL bytes past the sink's checkpoint (on disk), against `receiver.wal.max_backlog_bytes`. */
  readonly walBacklog: BudgetFigures;
}

/** A running receiver. */
export interface Receiver {
  readonly httpAddress: AddressInfo;
  readonly grpcPort: number;
  /** `null` when ready, else every reason why not (joined by `; `). */
  notReadyReason(): string | null;
  /** The figures of its managed budgets now (read at scrape). */
  budgets(): ReceiverBudgets;
  /** Resolves when the WAL present at startup has been replayed. */
  whenReplayed(): Promise<void>;
  /** Graceful stop: no acknowledged record is left outside the WAL, and the sink flushes what it holds. */
  stop(): Promise<void>;
  /**
   * What a stop abandoned now would leave for the next start: the WAL past the sink's last checkpoint (acknowledged,
   * durable, not yet in object storage), or `null` when everything durable is stored.
   */
  unfinished(): { readonly walDurable: WalPosition; readonly sinkCheckpoint: WalPosition | null } | null;
}

/** A validated `host:port` from the configuration (the schema already checked it). */
function listenAddress(address: string): { host: string; port: number } {
  const parsed = splitHostPort(address);
  if (!parsed.ok) throw new Error(`invalid listen address ${address}: ${parsed.error}`);
  return parsed.value;
}

/** Starts the receiver role. */
export async function startReceiver(config: SluiceConfig, deps: ReceiverDeps): Promise<Receiver> {
  const rc = config.receiver;
  // Where the WAL stood stored at startup: what a stop abandoned before the first flush is measured from here.
  const startCheckpoint = (await readCheckpoint(rc.walDir))?.position ?? null;
  const wal: Wal = await openWal({
    dir: rc.walDir,
    groupCommitMs: rc.wal.groupCommitMs,
    segmentBytes: rc.wal.segmentBytes,
    fenceRetryMs: rc.wal.fenceRetryMs,
    ...(deps.walFilePort ? { filePort: deps.walFilePort } : {}),
    onFenced: (event) => deps.walObserver?.fenced(event),
    onResumed: (event) => deps.walObserver?.resumed(event),
  });
  const sink: Sink = startSink(
    {
      walDir: rc.walDir,
      storage: storageSettingsFrom(config.storage),
      flushAgeSecs: rc.sink.flushAgeSecs,
      flushIntervalMs: rc.sink.flushIntervalMs,
      flushBytes: rc.sink.flushBytes,
      ceilingBytes: deps.sinkCeilingBytes,
      miner: { ...rc.miner },
      replayTarget: wal.durablePosition(),
    },
    deps.sinkObserver ?? { message: () => undefined, workerExited: () => undefined },
  );
  wal.onDurable((position) => sink.durable(position));
  const backlog = trackWalBacklog(wal, () => sink.checkpoint);

  let stopping = false;
  // Before any listener opens: the first export is already checked against a sample of the WAL volume.
  const diskGuard = createDiskGuard({
    path: rc.walDir,
    minFreePercent: rc.limits.minFreeDiskPercent,
    ...(deps.diskGuardObserver ? { observer: deps.diskGuardObserver } : {}),
  });
  await diskGuard.start();
  // Every reason to answer /readyz 503, each under its own name (docs/deployment.md#probes).
  const readiness = createReadiness();
  readiness.add('shutting_down', () => (stopping ? 'receiver shutting down' : null));
  readiness.add('wal_replay', () => (sink.replayed ? null : 'WAL replay in progress'));
  readiness.add('disk_low', () => diskGuard.notReadyReason());
  readiness.add('wal_fenced', () => walNotReadyReason(wal.state()));
  const busyReason = (): string | null => {
    if (stopping) return 'the receiver is shutting down; retry';
    if (wal.backlogBytes(sink.checkpoint) > rc.wal.maxBacklogBytes) {
      return 'the write-ahead log backlog is over receiver.wal.max_backlog_bytes (object storage is behind); retry';
    }
    return null;
  };
  const ingest = createIngestService({
    wal,
    busyReason,
    maxInflightBytes: rc.limits.maxInflightBytes,
    diskLow: (bytes) => diskGuard.admit(bytes),
    ...(deps.ingestObserver ? { observer: deps.ingestObserver } : {}),
  });

  const http: OtlpHttpServer = createOtlpHttpServer({
    ingest,
    limits: { maxRequestBytes: rc.limits.maxRequestBytes, maxDecompressedBytes: rc.limits.maxDecompressedBytes },
    access: deps.access,
    connectionCap: deps.connectionCaps.http,
    probes: deps.probes,
  });
  const grpc: OtlpGrpcServer = createOtlpGrpcServer({
    ingest,
    maxMessageBytes: rc.limits.maxDecompressedBytes,
    access: deps.access,
    connectionCap: deps.connectionCaps.grpc,
  });
  const httpAt = listenAddress(rc.httpAddr);
  const grpcAt = listenAddress(rc.grpcAddr);
  const httpAddress = await http.listen(httpAt.host, httpAt.port);
  const grpcPort = await grpc.listen(grpcAt.host, grpcAt.port);

  return {
    httpAddress,
    grpcPort,
    budgets() {
      return {
        sinkBuffers: { ...sink.bufferFigures(), limit: deps.sinkCeilingBytes },
        inflightBodies: { ...ingest.inflightFigures(), limit: rc.limits.maxInflightBytes },
        walBacklog: { ...backlog.figures(), limit: rc.wal.maxBacklogBytes },
      };
    },
    notReadyReason: () => readiness.notReadyReason(),
    whenReplayed: () => sink.whenReplayed(),
    unfinished() {
      const walDurable = wal.durablePosition();
      const sinkCheckpoint = sink.checkpoint ?? startCheckpoint;
      if (sinkCheckpoint !== null && compareWalPositions(sinkCheckpoint, walDurable) >= 0) return null;
      return { walDurable, sinkCheckpoint };
    },
    async stop() {
      stopping = true;
      diskGuard.stop();
      await Promise.all([http.close(), grpc.close()]);
      await wal.close();
      backlog.stop();
      await sink.stop(wal.durablePosition());
    },
  };
}
