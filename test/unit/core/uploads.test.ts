import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ConflictError,
  GoneError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '#core/errors.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { ObjectStore, UploadRepository, UploadTargets } from '#core/ports.ts';
import type { Upload } from '#core/uploads/upload.ts';
import { createJob } from '#core/use-cases/create-job.ts';
import { createUpload } from '#core/use-cases/create-upload.ts';
import { openUpload } from '#core/use-cases/open-upload.ts';
import { memoryStore } from './memory-ports.ts';

const owner: Caller = { kind: 'key', keyId: 'key_1', account: 'key_1', defaults: {} };
const stranger: Caller = { kind: 'key', keyId: 'key_2', account: 'key_2', defaults: {} };
const MB = 1024 * 1024;

function setup() {
  const store = memoryStore({ key_1: 20, key_2: 20 });
  const records = new Map<string, Upload>();
  const objects = new Map<string, Buffer>();
  let now = new Date('2026-11-22T08:00:00.000Z');
  const uploads: UploadRepository = {
    async insert(upload) {
      records.set(upload.id, structuredClone(upload));
    },
    async get(id) {
      return records.get(id) ?? null;
    },
  };
  const storage: ObjectStore & UploadTargets = {
    async put(key, body) {
      objects.set(key, body);
    },
    async get(key) {
      return objects.get(key)!;
    },
    async exists(key) {
      return objects.has(key);
    },
    async delete(key) {
      objects.delete(key);
    },
    async presignGet(key) {
      return `https://storage.example/${key}?get`;
    },
    async presignPut(key, object, seconds) {
      return `https://storage.example/${key}?put&type=${object.contentType}&length=${object.bytes}&expires=${seconds}`;
    },
    async sizeOf(key) {
      return objects.get(key)?.length ?? null;
    },
  };
  const clock = { now: () => now };
  const deps = {
    ...store,
    clock,
    uploads,
    objects: storage,
    maxPhotoBytes: 40 * MB,
    maxArchiveBytes: 2048 * MB,
    maxSourceBytes: 20 * MB,
    allowLoopback: false,
    assets: { insert: async () => undefined, get: async () => null },
    accounts: {
      get: async (account: string) => store.balances.get(account) ?? null,
      open: async () => false,
      ledger: async () => [],
    },
    fetchSource: async () => {
      throw new Error('no network here');
    },
  };
  return { deps, store, objects, later: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();

describe('POST /uploads', () => {
  it('signs a PUT of exactly the declared type and size, and refuses other types and sizes over the limits', async () => {
    const t = setup();
    const { upload, url } = await createUpload(t.deps, owner, {
      content_type: 'image/jpeg',
      filename: 'C:\\photos\\big car.jpg',
      size: 35 * MB,
    });
    expect(upload).toMatchObject({
      kind: 'photo',
      bytes: 35 * MB,
      filename: 'big car.jpg',
      ownerId: 'key_1',
    });
    expect(upload.key).toBe(`uploads/${upload.id}/upload.jpg`);
    expect(url).toContain(`type=image/jpeg&length=${35 * MB}`);
    await expect(createUpload(t.deps, owner, { content_type: 'text/plain', size: 10 })).rejects.toThrow(
      UnsupportedMediaTypeError,
    );
    await expect(createUpload(t.deps, owner, { content_type: 'image/png', size: 41 * MB })).rejects.toThrow(
      PayloadTooLargeError,
    );
    await expect(
      createUpload(t.deps, owner, { content_type: 'application/zip', size: 2049 * MB }),
    ).rejects.toThrow(PayloadTooLargeError);
    const archive = await createUpload(t.deps, owner, { content_type: 'application/zip', size: 1500 * MB });
    expect(archive.upload.kind).toBe('archive');
    await expect(createUpload(t.deps, owner, { content_type: 'image/png', size: 0 })).rejects.toThrow(
      BadRequestError,
    );
  });

  it('is usable by its owner only, once completed, at its declared size, until it expires', async () => {
    const t = setup();
    const { upload } = await createUpload(t.deps, owner, { content_type: 'image/png', size: 5 });
    await expect(openUpload(t.deps, owner, upload.id, 'photo')).rejects.toThrow(ConflictError);
    t.objects.set(upload.key, Buffer.from('123456'));
    await expect(openUpload(t.deps, owner, upload.id, 'photo')).rejects.toThrow(/holds 6 bytes, but 5/);
    t.objects.set(upload.key, Buffer.from('12345'));
    await expect(openUpload(t.deps, stranger, upload.id, 'photo')).rejects.toThrow(NotFoundError);
    await expect(openUpload(t.deps, owner, 'upl_nope', 'photo')).rejects.toThrow(NotFoundError);
    await expect(openUpload(t.deps, owner, upload.id, 'archive')).rejects.toThrow(/is an image, not a ZIP/);
    expect((await openUpload(t.deps, owner, upload.id, 'photo')).id).toBe(upload.id);
    expect((await openUpload(t.deps, owner, upload.id, 'photo')).id).toBe(upload.id);
    t.later(24 * 3600 * 1000);
    await expect(openUpload(t.deps, owner, upload.id, 'photo')).rejects.toThrow(GoneError);
  });

  it('becomes a job’s source; bytes that are not an image, or over the pixel limit, are refused without a charge', async () => {
    const t = setup();
    const put = async (bytes: Buffer, type = 'image/jpeg') => {
      const { upload } = await createUpload(t.deps, owner, { content_type: type, size: bytes.length });
      t.objects.set(upload.key, bytes);
      return upload.id;
    };
    const request = (uploadId: string) => ({
      operation: 'plate' as const,
      source: { kind: 'upload' as const, uploadId },
      requested: {},
      backgroundFile: null,
    });
    const options = { route: 'jobs' as const, idempotencyKey: null };
    await expect(
      createJob(t.deps, owner, request(await put(Buffer.from('not an image'))), options),
    ).rejects.toThrow(UnsupportedMediaTypeError);
    // A JPEG header that claims 12000 x 9000 (108 MP) is refused before any pixel is decoded.
    const huge = await jpeg(120, 90);
    const sof = huge.indexOf(Buffer.from([0xff, 0xc0]));
    huge.writeUInt16BE(9000, sof + 5);
    huge.writeUInt16BE(12000, sof + 7);
    await expect(createJob(t.deps, owner, request(await put(huge)), options)).rejects.toThrow(
      /limit: 64,000,000 pixels/,
    );
    const zip = await put(Buffer.from('PK\x03\x04'), 'application/zip');
    await expect(createJob(t.deps, owner, request(zip), options)).rejects.toThrow(
      /send it to POST \/batches/,
    );
    expect(t.store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });

    const photo = await jpeg(64, 48);
    const id = await put(photo);
    const first = await createJob(t.deps, owner, request(id), options);
    const second = await createJob(t.deps, owner, request(id), options);
    expect(first.job.source).toMatchObject({ contentType: 'image/jpeg', bytes: photo.length });
    expect(t.objects.get(first.job.source.key)!.equals(photo)).toBe(true);
    expect(second.job.id).not.toBe(first.job.id);
    expect(t.store.balances.get('key_1')).toMatchObject({ available: 10, reserved: 10 });
  });
});
