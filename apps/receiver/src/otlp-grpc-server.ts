/**
 * @module otlp-grpc-server
 * OTLP/gRPC `opentelemetry.proto.collector.logs.v1.LogsService/Export` on @grpc/grpc-js, with a raw service
 * definition so our own decoder runs on the bytes (grpc-js inflates gzip-compressed messages itself). The
 * message cap is the decompressed-size cap; a larger message is refused by grpc-js with RESOURCE_EXHAUSTED.
 *
 * The listening socket is ours (node:net), and accepted connections are handed to grpc-js through its connection
 * injector: that is where the connection cap (`receiver.max_grpc_connections`) sits, which grpc-js itself does
 * not offer. A connection over the cap is closed at accept (the client sees UNAVAILABLE, which is retryable);
 * its cap must be created with `answersRefusals: false`.
 * Each call passes the access gate (metadata `authorization: Bearer …` and the tenant key) before decoding.
 */
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type Metadata,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { assertNever } from '@sluice/core';
import type { AccessGate, AccessRefusal, ConnectionCap } from '@sluice/edge';
import { encodeExportLogsResponse } from '@sluice/otlp';
import { grpcStatusFor } from './grpc-status.js';
import type { IngestOutcome } from './ingest-outcome.js';
import type { IngestService } from './ingest-service.js';

const EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

const SERVICE: ServiceDefinition = {
  Export: {
    path: EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};

/** Options for {@link createOtlpGrpcServer}. */
export interface OtlpGrpcServerOptions {
  readonly ingest: IngestService;
  /** Largest accepted message after decompression, bytes. */
  readonly maxMessageBytes: number;
  /** Token and tenant rule (the tenant metadata key is the header name in lower case). */
  readonly access: AccessGate;
  /** This listener's connection cap (`receiver.max_grpc_connections`). */
  readonly connectionCap: ConnectionCap;
}

/** A startable OTLP/gRPC listener. */
export interface OtlpGrpcServer {
  /** Binds and starts; resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting and waits for in-flight calls to finish. */
  close(): Promise<void>;
}

function metadataValues(metadata: Metadata, key: string): string[] {
  return metadata.get(key).map((v) => (typeof v === 'string' ? v : v.toString('latin1')));
}

/** The gate's refusal as an ingest outcome. */
function refusalOutcome(refusal: AccessRefusal): IngestOutcome {
  switch (refusal.kind) {
    case 'unauthenticated':
      return { status: 'unauthenticated', message: refusal.message };
    case 'missing_tenant':
    case 'invalid_tenant':
      return { status: 'bad_tenant', message: refusal.message };
    case 'tenant_denied':
      return { status: 'tenant_denied', message: refusal.message };
    default:
      return assertNever(refusal, 'access refusal');
  }
}

/** Creates the OTLP/gRPC listener. */
export function createOtlpGrpcServer(options: OtlpGrpcServerOptions): OtlpGrpcServer {
  const { access, connectionCap } = options;
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  const key = access.tenantHeader.toLowerCase();
  const empty = Buffer.from(encodeExportLogsResponse('protobuf'));

  server.addService(SERVICE, {
    Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      const admitted = access.admit('ingest', {
        authorization: metadataValues(call.metadata, 'authorization'),
        tenant: metadataValues(call.metadata, key),
      });
      if (!admitted.ok) {
        const outcome = options.ingest.refuse('grpc', refusalOutcome(admitted.error));
        if (outcome.status !== 'accepted') callback({ code: grpcStatusFor(outcome), details: outcome.message });
        return;
      }
      options.ingest.ingest('grpc', admitted.value.tenant, call.request).then(
        (outcome) => {
          if (outcome.status === 'accepted') return callback(null, empty);
          callback({ code: grpcStatusFor(outcome), details: outcome.message });
        },
        () => callback({ code: GrpcStatus.INTERNAL, details: 'internal error' }),
      );
    },
  });

  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const listener: NetServer = createNetServer({ noDelay: true });
  // The cap counts first (and closes a connection over it), so the handler below sees its verdict.
  connectionCap.attach(listener);
  listener.on('connection', (socket: Socket) => {
    if (!connectionCap.isRefused(socket)) injector.injectConnection(socket);
  });

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(port, host, () => {
          listener.off('error', reject);
          const address = listener.address();
          resolve(typeof address === 'object' && address !== null ? address.port : port);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        listener.close();
        // Drain: running calls get up to 10 s (as before), then their sessions are cancelled.
        injector.drain(10_000);
        const force = setTimeout(() => server.forceShutdown(), 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
