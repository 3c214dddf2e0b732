/**
 * @module otlp-grpc-server
 * OTLP/gRPC `opentelemetry.proto.collector.logs.v1.LogsService/Export` on @grpc/grpc-js, with a raw service
 * definition so our own decoder runs on the bytes (grpc-js inflates gzip-compressed messages itself). The
 * message cap is the decompressed-size cap; a larger message is refused by grpc-js with RESOURCE_EXHAUSTED.
 */
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { encodeExportLogsResponse } from '@sluice/otlp';
import { grpcStatusFor } from './grpc-status.js';
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
  /** Tenant header name; gRPC metadata keys are lowercase. */
  readonly tenantHeader: string;
}

/** A startable OTLP/gRPC listener. */
export interface OtlpGrpcServer {
  /** Binds and starts; resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting and waits for in-flight calls to finish. */
  close(): Promise<void>;
}

/** Creates the OTLP/gRPC listener. */
export function createOtlpGrpcServer(options: OtlpGrpcServerOptions): OtlpGrpcServer {
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  const key = options.tenantHeader.toLowerCase();
  const empty = Buffer.from(encodeExportLogsResponse('protobuf'));

  server.addService(SERVICE, {
    Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      const tenantValues = call.metadata.get(key).map((v) => (typeof v === 'string' ? v : v.toString('latin1')));
      options.ingest.ingest('grpc', tenantValues, call.request).then(
        (outcome) => {
          if (outcome.status === 'accepted') return callback(null, empty);
          callback({ code: grpcStatusFor(outcome), details: outcome.message });
        },
        () => callback({ code: GrpcStatus.INTERNAL, details: 'internal error' }),
      );
    },
  });

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) => {
          if (error) reject(error);
          else resolve(bound);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
