import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The part of s3rver's API the tests use (it ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

/** s3rver's one account (it knows no other access key id). */
export const S3_KEY = { id: 'S3RVER', secret: 'S3RVER' };

export interface S3Server {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  port: number;
  put(bucket: string, key: string, body: Buffer): Promise<void>;
  /** The environment a flatload child needs to reach it with the standard variables (and nothing from ~/.aws). */
  env(key?: { id: string; secret: string }): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * s3rver (pure JavaScript, from npm) on a free port with the buckets asked
 * for, storing objects in a temporary directory. It serves Range GETs and
 * ListObjectsV2 and refuses an unknown access key id, but it does not check
 * SigV4 signatures (a wrong secret passes) and ignores If-Match.
 */
export async function startS3(buckets: string[]): Promise<S3Server> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const directory = mkdtempSync(join(tmpdir(), 'flatload-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.id, secretAccessKey: S3_KEY.secret },
    // s3rver predates the SDK's default CRC32 trailers on uploads.
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    port,
    put: async (bucket, key, body) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    env: (key = S3_KEY) => ({
      AWS_ACCESS_KEY_ID: key.id,
      AWS_SECRET_ACCESS_KEY: key.secret,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_CONFIG_FILE: join(directory, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(directory, 'no-credentials'),
    }),
    stop: async () => {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
