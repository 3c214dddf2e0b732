/**
 * @module s3-server
 * Starts s3rver (a real S3-protocol server) on a free 127.0.0.1 port with a fresh directory and one bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { makeS3rverPutsWhole } from '@sluice/storage/testing';

/** A running s3rver. */
export interface TestS3Server {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  stop(): Promise<void>;
}

/** Starts s3rver; the caller stops it. Paginated listing needs `--openssl-legacy-provider` (set by the test runner). */
export async function startS3Server(bucket = 'sluice'): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'sluice-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  makeS3rverPutsWhole(server);
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
