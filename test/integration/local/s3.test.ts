import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalS3 } from '../../../local/s3.ts';

const clientFor = (endpoint: string, accessKeyId = 'S3RVER') =>
  new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

describe('startLocalS3', () => {
  let stack: Awaited<ReturnType<typeof startLocalS3>>;
  let s3: S3Client;
  const bytesOf = async (Key: string) => {
    const out = await s3.send(new GetObjectCommand({ Bucket: 'photos', Key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  };

  beforeAll(async () => {
    stack = await startLocalS3({ buckets: ['photos', 'results'] });
    s3 = clientFor(stack.endpoint);
  });
  afterAll(async () => {
    s3.destroy();
    await stack.close();
  });

  it('stores a Buffer body and returns the exact bytes', async () => {
    const body = randomBytes(200_000);
    await s3.send(
      new PutObjectCommand({ Bucket: 'photos', Key: 'in/car.jpg', Body: body, ContentType: 'image/jpeg' }),
    );
    expect((await bytesOf('in/car.jpg')).equals(body)).toBe(true);
  });

  it('stores a stream body with ContentLength without aws-chunked framing', async () => {
    const body = randomBytes(3 * 1024 * 1024 + 17); // large enough for the SDK's Expect: 100-continue
    const chunks = Array.from({ length: 4 }, (_, i) => body.subarray(i * 1_000_000, (i + 1) * 1_000_000));
    chunks.push(body.subarray(4_000_000));
    await s3.send(
      new PutObjectCommand({
        Bucket: 'photos',
        Key: 'in/stream.bin',
        Body: Readable.from(chunks),
        ContentLength: body.length,
      }),
    );
    const stored = await bytesOf('in/stream.bin');
    expect(stored.length).toBe(body.length);
    expect(stored.equals(body)).toBe(true);
  });

  it('answers HeadObject and DeleteObject', async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: 'photos',
        Key: 'tmp/x.png',
        Body: 'png!',
        ContentType: 'image/png',
        Metadata: { job: 'j1' },
      }),
    );
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'tmp/x.png' }));
    expect(head).toMatchObject({ ContentLength: 4, ContentType: 'image/png', Metadata: { job: 'j1' } });
    await s3.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'tmp/x.png' }));
    await expect(
      s3.send(new HeadObjectCommand({ Bucket: 'photos', Key: 'tmp/x.png' })),
    ).rejects.toBeInstanceOf(NotFound);
  });

  it('pages through ListObjectsV2 with continuation tokens', async () => {
    const keys = ['list/a', 'list/b', 'list/c', 'list/d', 'list/e'];
    for (const Key of keys) await s3.send(new PutObjectCommand({ Bucket: 'results', Key, Body: Key }));
    const seen: string[] = [];
    let ContinuationToken: string | undefined;
    let pages = 0;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: 'results', Prefix: 'list/', MaxKeys: 2, ContinuationToken }),
      );
      seen.push(...(page.Contents ?? []).map((o) => o.Key!));
      ContinuationToken = page.NextContinuationToken;
      pages++;
    } while (ContinuationToken);
    expect(seen).toEqual(keys);
    expect(pages).toBe(3);
  });

  it('serves a presigned GET URL to plain fetch', async () => {
    const body = randomBytes(1000);
    await s3.send(new PutObjectCommand({ Bucket: 'results', Key: 'out/result.jpg', Body: body }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'results', Key: 'out/result.jpg' }), {
      expiresIn: 60,
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
  });

  it('refuses presigned URLs with an unknown key id or past their expiry', async () => {
    const command = new GetObjectCommand({ Bucket: 'results', Key: 'out/result.jpg' });
    const stranger = clientFor(stack.endpoint, 'SOMEONE');
    const foreign = await getSignedUrl(stranger, command, { expiresIn: 60 });
    stranger.destroy();
    expect((await fetch(foreign)).status).toBe(403);
    const expired = await getSignedUrl(s3, command, {
      expiresIn: 1,
      signingDate: new Date(Date.now() - 60_000),
    });
    expect((await fetch(expired)).status).toBe(403);
  });
});

describe('startLocalS3 (dataDir)', () => {
  it('keeps buckets and objects across a restart and releases its port on close', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'local-s3-test-'));
    try {
      const first = await startLocalS3({ dataDir, buckets: ['photos'] });
      const s3a = clientFor(first.endpoint);
      await s3a.send(new PutObjectCommand({ Bucket: 'photos', Key: 'kept.txt', Body: 'still here' }));
      s3a.destroy();
      await first.close();
      await expect(fetch(first.endpoint)).rejects.toThrow();

      const second = await startLocalS3({ dataDir, buckets: ['photos'] });
      const s3b = clientFor(second.endpoint);
      const out = await s3b.send(new GetObjectCommand({ Bucket: 'photos', Key: 'kept.txt' }));
      const text = await out.Body!.transformToString();
      s3b.destroy();
      await second.close();
      expect(text).toBe('still here');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
