import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelUnavailableError } from '#core/errors.ts';
import { ensureIsnetModel, ISNET_RESOURCE, joinFromPackage } from '#models/isnet.ts';
import { MODELS } from '#models/manifest.ts';

const fakePackage = async (resource: unknown, chunks: Record<string, Buffer> = {}) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'isnet-pkg-'));
  await mkdir(path.join(dir, 'dist'));
  await writeFile(path.join(dir, 'dist', 'resources.json'), JSON.stringify({ [ISNET_RESOURCE]: resource }));
  for (const [name, bytes] of Object.entries(chunks)) await writeFile(path.join(dir, 'dist', name), bytes);
  return dir;
};
const hash = (c: string) => c.repeat(64);

describe('joinFromPackage', () => {
  it('refuses a package whose resource differs in size from the manifest', async () => {
    const pkg = await fakePackage({ size: 10, chunks: [] });
    const cache = await mkdtemp(path.join(tmpdir(), 'isnet-cache-'));
    await expect(joinFromPackage(cache, pkg)).rejects.toThrow(/manifest expects 88188479/);
  });

  it('refuses a chunk shorter than resources.json says, and leaves no partial file behind', async () => {
    const pkg = await fakePackage(
      { size: MODELS.isnet.bytes, chunks: [{ hash: hash('a'), offsets: [0, 10] }] },
      { [hash('a')]: Buffer.alloc(5) },
    );
    const cache = await mkdtemp(path.join(tmpdir(), 'isnet-cache-'));
    await expect(joinFromPackage(cache, pkg)).rejects.toThrow(/is 5 bytes, resources.json says 10/);
    expect(await readdir(cache)).toEqual([]);
  });

  it('refuses chunks that do not follow on, and a whole that fails the checksum', async () => {
    const gap = await fakePackage(
      { size: MODELS.isnet.bytes, chunks: [{ hash: hash('b'), offsets: [4, 8] }] },
      { [hash('b')]: Buffer.alloc(4) },
    );
    const cache = await mkdtemp(path.join(tmpdir(), 'isnet-cache-'));
    await expect(joinFromPackage(cache, gap)).rejects.toThrow(/does not follow on at 0/);
    const short = await fakePackage(
      { size: MODELS.isnet.bytes, chunks: [{ hash: hash('c'), offsets: [0, 4] }] },
      { [hash('c')]: Buffer.alloc(4) },
    );
    await expect(joinFromPackage(cache, short)).rejects.toThrow(/expected b6e8497b/);
    expect(await readdir(cache)).toEqual([]);
  });
});

describe('ensureIsnetModel', () => {
  it('names the directories it looked in and why the package did not help', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'isnet-none-'));
    const pkg = await fakePackage(undefined);
    const error = await ensureIsnetModel([empty], { cacheDir: empty, packageDir: pkg }).catch((e) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toContain(MODELS.isnet.file);
    expect(error.message).toContain(empty);
    expect(error.message).toMatch(
      /npm package @imgly\/background-removal-data failed too: .*lists no \/models\/medium/,
    );
  });
});
