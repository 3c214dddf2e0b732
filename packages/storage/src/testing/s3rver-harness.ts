/**
 * @module testing/s3rver-harness
 * Starts s3rver on 127.0.0.1 (free port) over a fresh temp directory with one bucket, for tests. Paginated
 * listing needs `NODE_OPTIONS=--openssl-legacy-provider` (s3rver encrypts continuation tokens with DES).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { makeS3rverPutsWhole } from './s3rver-whole-puts.js';

/** A running s3rver. */
export interface S3rverHandle {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/** Starts s3rver with bucket `bucket` (default `sluice-test`). */
export async function startS3rver(bucket = 'sluice-test'): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(tmpdir(), 'sluice-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  makeS3rverPutsWhole(server);
  const addr = await server.run();
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
