import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  GoneError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '#core/errors.ts';
import type { Asset } from '#core/files/asset-record.ts';
import {
  cleanOriginalName,
  nameFromUrl,
  openAsset,
  originalNameOr,
  storageName,
  usableAsset,
} from '#core/files/asset-rules.ts';
import { pageOf, pageQuerySchema } from '#core/files/files.ts';
import type { UploadedFile } from '#core/jobs/input.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { AssetRepository, FileRepository } from '#core/ports.ts';
import { createAsset } from '#core/use-cases/create-asset.ts';
import { deleteFile } from '#core/use-cases/delete-file.ts';
import { listFiles } from '#core/use-cases/list-files.ts';
import { registerResultFiles } from '#core/use-cases/register-result-files.ts';
import { aJob } from './fixtures.ts';
import { memoryFiles, memoryObjects } from './memory-ports.ts';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]);
const DAY = 24 * 3600 * 1000;
const T0 = new Date('2026-11-22T08:00:00.000Z');

const alice: Caller = { kind: 'key', keyId: 'key_alice', account: 'key_alice', defaults: {} };
const bob: Caller = { kind: 'key', keyId: 'key_bob', account: 'key_bob', defaults: {} };
const master: Caller = { kind: 'master' };

/** In-memory stand-ins for the ports, sharing one clock. */
function world() {
  const clock = { current: T0, now: () => clock.current };
  const { store: objectStore, objects } = memoryObjects();
  const assets = new Map<string, Asset>();
  const assetRepo: AssetRepository = {
    async insert(asset, file) {
      assets.set(asset.id, asset);
      memory.records.set(file.fileId, file);
    },
    async get(assetId) {
      return assets.get(assetId) ?? null;
    },
  };
  const memory = memoryFiles(clock);
  const files = memory.records;
  const fileRepo: FileRepository = {
    ...memory.repository,
    async delete(file) {
      if (!(await memory.repository.delete(file))) return false;
      if (file.assetId) assets.delete(file.assetId);
      return true;
    },
  };
  const fetched: UploadedFile = { bytes: JPEG, filename: 'ignored.jpg', contentType: 'image/jpeg' };
  const deps = {
    clock,
    objects: objectStore,
    assets: assetRepo,
    files: fileRepo,
    fetchSource: async () => fetched,
    maxSourceBytes: 1000,
  };
  return { deps, clock, objects, assets, files };
}

const upload = (bytes: Buffer = JPEG, filename: string | null = 'car.jpg') => ({
  kind: 'file' as const,
  file: { bytes, filename, contentType: 'image/jpeg' },
});

describe('file listing query', () => {
  it('defaults to 25 newest files', () => {
    expect(pageQuerySchema().parse({})).toEqual({ limit: 25 });
  });

  it('accepts limit 1..100 and an integer cursor', () => {
    expect(pageQuerySchema().parse({ limit: '1', before: '42' })).toEqual({ limit: 1, before: 42 });
    expect(pageQuerySchema().parse({ limit: '100' }).limit).toBe(100);
  });

  it.each([
    { limit: '0' },
    { limit: '101' },
    { limit: 'ten' },
    { limit: '2.5' },
    { limit: '' },
    { limit: '-1' },
    { before: 'abc' },
    { before: '1e3' },
    { before: '99999999999999999' },
  ])('refuses %o', (query) => {
    expect(pageQuerySchema().safeParse(query).success).toBe(false);
  });
});

describe('paging', () => {
  const rows = (...ids: number[]) => ids.map((fileId) => ({ fileId }));

  it('points the cursor at the last id shown when an extra row says there is more', () => {
    expect(pageOf(rows(9, 8, 7), 2)).toEqual({ items: rows(9, 8), nextCursor: 8 });
  });

  it('has no cursor on the last page, full or not', () => {
    expect(pageOf(rows(9, 8), 2)).toEqual({ items: rows(9, 8), nextCursor: null });
    expect(pageOf(rows(9), 2)).toEqual({ items: rows(9), nextCursor: null });
    expect(pageOf([], 2)).toEqual({ items: [], nextCursor: null });
  });
});

describe('names', () => {
  it('keeps the uploaded name but drops directories and control characters', () => {
    expect(cleanOriginalName('C:\\Users\\me\\My car.JPG')).toBe('My car.JPG');
    expect(cleanOriginalName('../../etc/passwd')).toBe('passwd');
    expect(cleanOriginalName('a\u0000b\nc.png')).toBe('abc.png');
    expect(cleanOriginalName('   ')).toBeNull();
    expect(cleanOriginalName(null)).toBeNull();
  });

  it('names a URL upload after its last path segment, decoded, without the query', () => {
    expect(nameFromUrl('https://cdn.example/photos/red%20car.jpg?size=l')).toBe('red car.jpg');
    expect(nameFromUrl('https://cdn.example/photos/car.webp/')).toBe('car.webp');
    expect(nameFromUrl('https://cdn.example/')).toBeNull();
    expect(nameFromUrl('https://cdn.example/bad%E0%A4%A.jpg')).toBe('bad%E0%A4%A.jpg');
  });

  it('falls back to image.<ext> when the image came without a name', () => {
    expect(originalNameOr(null, 'image/png')).toBe('image.png');
    expect(originalNameOr('car.jpg', 'image/png')).toBe('car.jpg');
  });

  it('makes a storage-safe name', () => {
    expect(storageName('Café crème.jpg', 'image/jpeg')).toBe('Cafe_creme.jpg');
    expect(storageName('.hidden.png', 'image/png')).toBe('hidden.png');
    expect(storageName('автомобиль.jpg', 'image/jpeg')).toBe('image.jpg');
    expect(storageName('car', 'image/jpeg')).toBe('car');
    expect(storageName('фото', 'image/webp')).toBe('image.webp');
    expect(storageName('x'.repeat(300), 'image/jpeg')).toHaveLength(100);
  });
});

describe('using an asset', () => {
  const asset = (overrides: Partial<Asset> = {}): Asset => ({
    id: 'ast_0123456789abcdefghjkmnpq',
    ownerId: 'key_alice',
    fileId: 1,
    key: 'assets/ast_0123456789abcdefghjkmnpq/car.jpg',
    originalName: 'car.jpg',
    contentType: 'image/jpeg',
    bytes: JPEG.length,
    sha256: 'ab',
    createdAt: T0.toISOString(),
    expiresAt: new Date(T0.getTime() + 7 * DAY).toISOString(),
    ...overrides,
  });
  const id = 'ast_0123456789abcdefghjkmnpq';

  it('is allowed to its owner and to the master key before it expires', () => {
    expect(usableAsset(asset(), alice, id, T0)).toEqual(asset());
    expect(usableAsset(asset(), master, id, T0)).toEqual(asset());
  });

  it('is 404 for an unknown asset and for another owner', () => {
    expect(() => usableAsset(null, alice, id, T0)).toThrow(NotFoundError);
    expect(() => usableAsset(asset(), bob, id, T0)).toThrow(`Asset ${id} does not exist`);
  });

  it('is 410 from the moment it expires', () => {
    const expiry = new Date(T0.getTime() + 7 * DAY);
    expect(() => usableAsset(asset(), alice, id, new Date(expiry.getTime() - 1))).not.toThrow();
    expect(() => usableAsset(asset(), alice, id, expiry)).toThrow(GoneError);
    expect(() => usableAsset(asset(), alice, id, expiry)).toThrow(
      `Asset ${id} expired at ${expiry.toISOString()}`,
    );
  });

  it('is 404, not 410, for another owner even when expired, so ids cannot be probed', () => {
    expect(() => usableAsset(asset(), bob, id, new Date(T0.getTime() + 30 * DAY))).toThrow(NotFoundError);
  });
});

describe('createAsset', () => {
  it('stores an upload for 7 days under assets/<id>/ and lists it as a file', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload(JPEG, 'My Car.jpg'));
    expect(asset).toMatchObject({
      id: expect.stringMatching(/^ast_[0-9a-z]{24}$/),
      ownerId: 'key_alice',
      originalName: 'My Car.jpg',
      contentType: 'image/jpeg',
      createdAt: T0.toISOString(),
      expiresAt: '2026-11-29T08:00:00.000Z',
    });
    expect(asset.key).toBe(`assets/${asset.id}/My_Car.jpg`);
    expect(w.objects.get(asset.key)).toEqual(JPEG);
    expect(w.files.get(asset.fileId)).toMatchObject({
      kind: 'asset',
      assetId: asset.id,
      jobId: null,
      url: null,
      name: 'My Car.jpg',
      expiresAt: asset.expiresAt,
    });
  });

  it('names a URL upload after the URL the caller sent', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, { kind: 'url', url: 'https://cdn.example/a/front.jpg' });
    expect(asset.originalName).toBe('front.jpg');
  });

  it('refuses what is not an image (415), too large (413), or an asset_id (400)', async () => {
    const w = world();
    await expect(createAsset(w.deps, alice, upload(Buffer.from('GIF89a')))).rejects.toThrow(
      UnsupportedMediaTypeError,
    );
    await expect(
      createAsset(w.deps, alice, upload(Buffer.concat([JPEG, Buffer.alloc(1000)]))),
    ).rejects.toThrow(PayloadTooLargeError);
    await expect(createAsset(w.deps, alice, { kind: 'asset', assetId: 'ast_x' })).rejects.toThrow(
      BadRequestError,
    );
    expect(w.objects.size).toBe(0);
  });
});

describe('openAsset (the asset_id source of a job)', () => {
  it('serves the bytes for 7 days, then answers 410', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload());
    w.clock.current = new Date(T0.getTime() + 7 * DAY - 1000);
    expect((await openAsset(w.deps, alice, asset.id)).bytes).toEqual(JPEG);
    w.clock.current = new Date(T0.getTime() + 7 * DAY);
    await expect(openAsset(w.deps, alice, asset.id)).rejects.toThrow(GoneError);
  });

  it('lets the master key use anyone’s asset, and nobody else', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload());
    expect((await openAsset(w.deps, master, asset.id)).filename).toBe('car.jpg');
    await expect(openAsset(w.deps, bob, asset.id)).rejects.toThrow(NotFoundError);
  });

  it('is 404 when the bytes are gone, or the id is not an asset id', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload());
    w.objects.clear();
    await expect(openAsset(w.deps, alice, asset.id)).rejects.toThrow(`Asset ${asset.id} does not exist`);
    await expect(openAsset(w.deps, alice, 'job_0123456789abcdefghjkmnpq')).rejects.toThrow(NotFoundError);
  });
});

describe('listFiles', () => {
  it('pages through the caller’s own files newest first', async () => {
    const w = world();
    const mine = [];
    for (let i = 0; i < 5; i++) {
      mine.push(await createAsset(w.deps, alice, upload()));
      await createAsset(w.deps, bob, upload());
    }
    const first = await listFiles(w.deps, alice, { limit: 2, before: null });
    expect(first.files.map((f) => f.assetId)).toEqual([mine[4]!.id, mine[3]!.id]);
    const second = await listFiles(w.deps, alice, { limit: 2, before: first.nextCursor });
    expect(second.files.map((f) => f.assetId)).toEqual([mine[2]!.id, mine[1]!.id]);
    const last = await listFiles(w.deps, alice, { limit: 2, before: second.nextCursor });
    expect(last).toEqual({ files: [expect.objectContaining({ assetId: mine[0]!.id })], nextCursor: null });
  });

  it('shows the master key every owner’s files', async () => {
    const w = world();
    await createAsset(w.deps, alice, upload());
    await createAsset(w.deps, bob, upload());
    const all = await listFiles(w.deps, master, { limit: 25, before: null });
    expect(all.files.map((f) => f.ownerId)).toEqual(['key_bob', 'key_alice']);
  });

  it('leaves out expired files', async () => {
    const w = world();
    await createAsset(w.deps, alice, upload());
    w.clock.current = new Date(T0.getTime() + 8 * DAY);
    expect((await listFiles(w.deps, alice, { limit: 25, before: null })).files).toEqual([]);
  });
});

describe('deleteFile', () => {
  it('deletes the bytes and the record; an asset becomes unusable', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload());
    await deleteFile(w.deps, alice, asset.fileId);
    expect(w.objects.has(asset.key)).toBe(false);
    expect(w.files.has(asset.fileId)).toBe(false);
    await expect(openAsset(w.deps, alice, asset.id)).rejects.toThrow(NotFoundError);
    await expect(deleteFile(w.deps, alice, asset.fileId)).rejects.toThrow(NotFoundError);
  });

  it('is 404 for another owner’s file and allowed to the master key', async () => {
    const w = world();
    const asset = await createAsset(w.deps, alice, upload());
    await expect(deleteFile(w.deps, bob, asset.fileId)).rejects.toThrow(
      `File ${asset.fileId} does not exist`,
    );
    expect(w.objects.has(asset.key)).toBe(true);
    await deleteFile(w.deps, master, asset.fileId);
    expect(w.files.size).toBe(0);
  });
});

describe('registerResultFiles', () => {
  const finishedAt = '2026-11-22T08:05:00.000Z';
  const success = aJob({ ownerId: 'key_alice', status: 'success', finishedAt });
  const results = [
    { name: 'result.jpg', key: `results/${success.id}/result.jpg`, contentType: 'image/jpeg', bytes: 1234 },
    {
      name: 'plate_mask.png',
      key: `results/${success.id}/plate_mask.png`,
      contentType: 'image/png',
      bytes: 99,
    },
  ];

  it('lists each result of a successful job as its owner’s file for 30 days', async () => {
    const w = world();
    const files = await registerResultFiles(w.deps, success, results);
    expect(files).toEqual([
      {
        fileId: 1,
        ownerId: 'key_alice',
        kind: 'result',
        name: 'result.jpg',
        contentType: 'image/jpeg',
        bytes: 1234,
        key: `results/${success.id}/result.jpg`,
        url: `/api/v1/results/${success.id}/result.jpg`,
        jobId: success.id,
        assetId: null,
        createdAt: finishedAt,
        expiresAt: '2026-12-22T08:05:00.000Z',
      },
      expect.objectContaining({ fileId: 2, name: 'plate_mask.png' }),
    ]);
    expect((await listFiles(w.deps, alice, { limit: 25, before: null })).files).toHaveLength(2);
  });

  it('adds nothing when settlement repeats, even after the owner deleted one', async () => {
    const w = world();
    await registerResultFiles(w.deps, success, results);
    await deleteFile(w.deps, alice, 1);
    expect(await registerResultFiles(w.deps, success, results)).toEqual([]);
    expect([...w.files.keys()]).toEqual([2]);
  });

  it('registers nothing for a job that did not succeed', async () => {
    const w = world();
    for (const status of ['failed', 'cancelled', 'processing'] as const) {
      expect(await registerResultFiles(w.deps, aJob({ status }), results)).toEqual([]);
    }
    expect(w.files.size).toBe(0);
  });
});
