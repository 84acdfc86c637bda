import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '#config';
import { NotFoundError } from '#core/errors.ts';
import type { ObjectStore, ObjectStreams, UploadTargets } from '#core/ports.ts';
import { clientSettings } from './client-settings.ts';

/** Parts of a streamed upload; S3 wants at least 5 MiB for every part but the last. */
const PART_BYTES = 8 * 1024 * 1024;

export const s3Client = (cfg: Config) =>
  new S3Client({
    ...clientSettings(cfg, cfg.S3_ENDPOINT),
    forcePathStyle: true,
    // Checksums only when S3 demands them: otherwise streamed uploads are stored with chunk framing
    // by S3-compatible stores, and presigned PUTs carry an empty-body checksum.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

export function s3Objects(client: S3Client, bucket: string): ObjectStore & ObjectStreams & UploadTargets {
  /**
   * The object under exactly `key`, from a listing rather than a HEAD: S3 documents the `s3:prefix` a
   * listing carries, which our grants are scoped by, but not the one of the list check that turns a
   * missing key's 403 into a 404 (docs/aws-parity.md). Keys list in byte order and `key` sorts before
   * every longer key it prefixes, so the first key listed is `key` whenever it exists.
   */
  const stat = async (key: string) => {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, MaxKeys: 1 }));
    const first = listed.Contents?.[0];
    return first?.Key === key ? first : null;
  };
  return {
    async put(key, body, contentType) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
      );
    },
    async get(key) {
      try {
        const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from(await response.Body!.transformToByteArray());
      } catch (error) {
        if (error instanceof NoSuchKey) throw missingObject(key, error);
        throw error;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    presignGet(key, expiresInSeconds, options = {}) {
      const disposition = options.downloadName
        ? { ResponseContentDisposition: `attachment; filename="${options.downloadName}"` }
        : {};
      return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key, ...disposition }), {
        expiresIn: expiresInSeconds,
      });
    },

    presignPut(key, object, expiresInSeconds) {
      return getSignedUrl(
        client,
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          ContentType: object.contentType,
          ContentLength: object.bytes,
        }),
        // Signed, not hoisted into the query: S3 then refuses a PUT of any other type or length.
        { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
      );
    },
    async sizeOf(key) {
      const found = await stat(key);
      return found ? (found.Size ?? 0) : null;
    },

    async getStream(key) {
      try {
        const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        // In Node the body is an IncomingMessage: an async iterable of Buffers.
        return response.Body as unknown as AsyncIterable<Uint8Array>;
      } catch (error) {
        if (error instanceof NoSuchKey) throw missingObject(key, error);
        throw error;
      }
    },
    async exists(key) {
      return (await stat(key)) !== null;
    },
    /**
     * Parts of `PART_BYTES` are uploaded as they fill, so memory holds one part. A body that ends before
     * the first part is full is one plain PUT. A failed upload is aborted: no part stays billed or visible.
     */
    async putStream(key, body, options) {
      const object = { Bucket: bucket, Key: key, ContentType: options.contentType };
      const headers = options.contentDisposition ? { ContentDisposition: options.contentDisposition } : {};
      let buffered: Buffer[] = [];
      let bufferedBytes = 0;
      let total = 0;
      let uploadId: string | undefined;
      const parts: Array<{ ETag: string; PartNumber: number }> = [];
      const flush = async () => {
        const part = Buffer.concat(buffered);
        buffered = [];
        bufferedBytes = 0;
        if (!uploadId) {
          const created = await client.send(new CreateMultipartUploadCommand({ ...object, ...headers }));
          uploadId = created.UploadId!;
        }
        const PartNumber = parts.length + 1;
        const { ETag } = await client.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body: part }),
        );
        parts.push({ ETag: ETag!, PartNumber });
      };
      try {
        for await (const chunk of body) {
          buffered.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          bufferedBytes += chunk.byteLength;
          total += chunk.byteLength;
          if (bufferedBytes >= PART_BYTES) await flush();
        }
        if (!uploadId) {
          await client.send(new PutObjectCommand({ ...object, ...headers, Body: Buffer.concat(buffered) }));
          return { bytes: total };
        }
        if (bufferedBytes > 0) await flush();
        await client.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
          }),
        );
        return { bytes: total };
      } catch (error) {
        if (uploadId) {
          await client
            .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
            .catch(() => undefined);
        }
        throw error;
      }
    },
  };
}

/** Its message may reach a client (a job's error): the storage key, an internal name, stays in the cause. */
export const missingObject = (key: string, cause: unknown): NotFoundError =>
  new NotFoundError('A stored file no longer exists', { cause: new Error(`${key}: ${String(cause)}`) });
