/**
 * @module start-server
 * Composes the enabled roles in one process: telemetry first, then the receiver (WAL recovery before its
 * listeners open). Logs one startup line per role with its bound addresses, and stops in reverse order.
 */
import type { SluiceConfig } from '@sluice/config';
import { startReceiver, type Probes, type Receiver } from '@sluice/receiver';
import { createLogger, createTelemetry, type Logger } from '@sluice/telemetry';
import { createIngestObserver, createSinkObserver } from './observers.js';

/** A running gateway. */
export interface RunningServer {
  readonly log: Logger;
  readonly receiver: Receiver | null;
  stop(): Promise<void>;
}

/** Starts every enabled role of `config`. */
export async function startServer(config: SluiceConfig): Promise<RunningServer> {
  const log = createLogger('sluice');
  const telemetry = createTelemetry({
    serviceName: config.telemetry.serviceName,
    otlpEndpoint: config.telemetry.otlpEndpoint,
    prometheus: config.telemetry.prometheus,
  });
  let receiver: Receiver | null = null;
  const probes: Probes = {
    notReadyReason: () => {
      if (receiver !== null) return receiver.notReadyReason();
      return config.receiver.enabled ? 'receiver starting' : null;
    },
    metricsText: async () => (config.telemetry.prometheus ? telemetry.metricsText() : null),
  };

  if (config.receiver.enabled) {
    receiver = await startReceiver(config, {
      probes,
      ingestObserver: createIngestObserver(telemetry.meter),
      sinkObserver: createSinkObserver(telemetry.meter, log),
    });
    const http = `${receiver.httpAddress.address}:${receiver.httpAddress.port}`;
    const grpcHost = config.receiver.grpcAddr.slice(0, config.receiver.grpcAddr.lastIndexOf(':'));
    log.info('receiver started', {
      http,
      grpc: `${grpcHost}:${receiver.grpcPort}`,
      wal_dir: config.receiver.walDir,
      storage: config.storage.backend,
    });
    const started = Date.now();
    void receiver.whenReplayed().then(() => log.info('WAL replay finished', { ms: Date.now() - started }));
  }
  if (config.querier.enabled) {
    log.warn('querier role is not available in this build yet; only the receiver runs', { http_addr: config.querier.httpAddr });
  }

  return {
    log,
    receiver,
    async stop() {
      if (receiver !== null) {
        await receiver.stop();
        log.info('receiver stopped');
      }
      await telemetry.shutdown();
    },
  };
}
