import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORAGE_PREFIXES } from '#core/storage-layout.ts';
import { startLocalS3 } from '../../../local/s3.ts';
import { expirationOf } from '../../../local/s3-lifecycle.ts';
import { readTopology } from '../../../local/template.ts';
import { plainAssembly } from '../../support/assembly.ts';

const Bucket = 'photo-jobs-local';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('the local bucket’s lifecycle rules', () => {
  let now = Date.parse('2026-11-22T10:30:00.000Z');
  const clock = { now: () => new Date(now) };
  let bucket: Awaited<ReturnType<typeof startLocalS3>>;
  let s3: S3Client;
  const put = (Key: string) => s3.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.from(Key) }));
  const head = (Key: string) => s3.send(new HeadObjectCommand({ Bucket, Key }));
  const listed = async (Prefix: string) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket, Prefix }))).Contents ?? []).map(
      (object) => object.Key,
    );

  beforeAll(async () => {
    const { templates } = await plainAssembly();
    const { lifecycle } = readTopology([templates.data, templates.service], () => Bucket);
    bucket = await startLocalS3({ buckets: [Bucket], lifecycle: { rules: lifecycle, clock } });
    s3 = new S3Client({
      endpoint: bucket.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    s3?.destroy();
    await bucket?.close();
  });

  it('reads the template’s rules: every area that expires, with its days', async () => {
    const { templates } = await plainAssembly();
    const { lifecycle } = readTopology([templates.data, templates.service], () => Bucket);
    expect(lifecycle.map(({ prefix, days }) => [prefix, days]).sort()).toEqual(
      Object.values(STORAGE_PREFIXES)
        .flatMap(({ prefix, expireDays }) => (expireDays === null ? [] : [[prefix, expireDays]]))
        .sort(),
    );
  });

  it('counts days as S3 does: from the write, rounded up to the next midnight UTC', () => {
    expect(expirationOf(new Date('2014-01-15T10:30:00Z'), 3)).toEqual(new Date('2014-01-19T00:00:00Z'));
    expect(expirationOf(new Date('2026-11-22T23:59:59Z'), 7)).toEqual(new Date('2026-11-30T00:00:00Z'));
  });

  it('keeps an object until its expiration, then answers as for a missing key, in every read', async () => {
    await put('sources/job_a/source.jpg');
    await put('keys/key_a/background.png');
    await put('sources/job_a/copy-me.jpg');
    // The stamp is the clock's, as S3's LastModified is the write's.
    expect((await head('sources/job_a/source.jpg')).LastModified).toEqual(new Date('2026-11-22T10:30:00Z'));

    now = Date.parse('2026-11-29T23:59:59.000Z'); // 7 days and 13.5 hours later: not yet midnight
    expect((await head('sources/job_a/source.jpg')).ContentLength).toBeGreaterThan(0);
    expect(await listed('sources/')).toEqual(['sources/job_a/copy-me.jpg', 'sources/job_a/source.jpg']);

    now = Date.parse('2026-11-30T00:00:00.000Z');
    await expect(head('sources/job_a/source.jpg')).rejects.toBeInstanceOf(NotFound);
    await expect(
      s3.send(new GetObjectCommand({ Bucket, Key: 'sources/job_a/source.jpg' })),
    ).rejects.toBeInstanceOf(NoSuchKey);
    await expect(
      s3.send(
        new CopyObjectCommand({
          Bucket,
          Key: 'sources/job_b/source.jpg',
          CopySource: `${Bucket}/sources/job_a/copy-me.jpg`,
        }),
      ),
    ).rejects.toThrow(/does not exist/);
    expect(await listed('sources/')).toEqual([]);
    // An area without a rule keeps its objects.
    expect((await head('keys/key_a/background.png')).ContentLength).toBeGreaterThan(0);
  });

  it('counts an object written later from its own write', async () => {
    now = Date.parse('2026-12-10T12:00:00.000Z');
    await put('results/job_c/result.jpg');
    now += 30 * DAY;
    expect((await head('results/job_c/result.jpg')).LastModified).toEqual(new Date('2026-12-10T12:00:00Z'));
    now += 12 * HOUR;
    await expect(head('results/job_c/result.jpg')).rejects.toBeInstanceOf(NotFound);
  });
});
