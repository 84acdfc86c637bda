import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openZipBuffer, zipBuffer, zipStream } from '#aws/zip-archives.ts';
import {
  BadRequestError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ZipEntryError,
} from '#core/errors.ts';
import {
  DEFAULT_ZIP_LIMITS,
  safeRelativePath,
  type ZipBudget,
  type ZipEntry,
  type ZipLimits,
  zipBudget,
} from '#core/limits/archive.ts';

interface RawEntry {
  name: string;
  data?: Buffer;
  /** Deflate `data`; otherwise it is stored. */
  deflate?: boolean;
  /** What the headers claim, when it should not be the truth. */
  declaredSize?: number;
  crc?: number;
  /** Unix mode for the upper half of the external attributes (made by Unix). */
  unixMode?: number;
  flags?: number;
  method?: number;
}

/**
 * An archive written by hand, byte by byte, so that it can say things no honest writer would:
 * lying sizes, links, names that climb out.
 */
function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = entry.data ?? Buffer.alloc(0);
    const stored = entry.deflate ? deflateRawSync(data) : data;
    const method = entry.method ?? (entry.deflate ? 8 : 0);
    const crc = entry.crc ?? crc32(data);
    const size = entry.declaredSize ?? data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.flags ?? 0, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(entry.unixMode === undefined ? 20 : (3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.flags ?? 0, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.unixMode ?? 0) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The checked directory of an archive held in memory, read with yauzl by ranges. */
const listZip = async (archive: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS) =>
  (await openZipBuffer(archive, limits)).listing;

async function readZipEntry(
  archive: Buffer,
  entry: ZipEntry,
  budget: ZipBudget,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<Buffer> {
  const opened = await openZipBuffer(archive, limits);
  const chunks: Buffer[] = [];
  for await (const chunk of opened.entry(entry, budget)) chunks.push(chunk);
  await opened.close();
  return Buffer.concat(chunks);
}

const readAll = async (archive: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS) => {
  const budget = zipBudget(limits);
  const { files } = await listZip(archive, limits);
  const entries: Array<{ name: string; data: Buffer }> = [];
  for (const entry of files)
    entries.push({ name: entry.name, data: await readZipEntry(archive, entry, budget, limits) });
  return entries;
};

const message = async (fn: () => Promise<unknown>): Promise<string> => {
  try {
    await fn();
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  return 'no error';
};

describe('zip writer', () => {
  it('round-trips stored, deflated, streamed, empty and non-ASCII entries through the reader', async () => {
    const photo = Buffer.from([0xff, 0xd8, 0xff, ...Array.from({ length: 5000 }, (_, i) => i % 251)]);
    async function* arriving() {
      yield photo.subarray(0, 1234);
      yield new Uint8Array(photo.subarray(1234));
    }
    const archive = await zipBuffer([
      { name: 'front/car1.jpg', data: arriving(), compress: false },
      { name: 'manifest.json', data: Buffer.from('{"a":1}'.repeat(500)), compress: true },
      { name: 'empty.txt', data: Buffer.alloc(0), compress: true },
      { name: 'ünïcödé/фото.jpg', data: photo, compress: true },
    ]);
    const entries = await readAll(archive);
    expect(entries.map((entry) => entry.name)).toEqual([
      'front/car1.jpg',
      'manifest.json',
      'empty.txt',
      'ünïcödé/фото.jpg',
    ]);
    expect(entries[0]!.data.equals(photo)).toBe(true);
    expect(entries[1]!.data.toString()).toBe('{"a":1}'.repeat(500));
    expect(entries[2]!.data.length).toBe(0);
    expect(entries[3]!.data.equals(photo)).toBe(true);
    const listing = await listZip(archive);
    expect(listing.files.map((entry) => entry.method)).toEqual([0, 8, 8, 8]);
  });

  it('streams: the first chunks come out before the later entries are produced', async () => {
    const produced: string[] = [];
    function* entries() {
      for (const name of ['a.jpg', 'b.jpg']) {
        produced.push(name);
        yield { name, data: Buffer.from(name), compress: false };
      }
    }
    const stream = zipStream(entries());
    await stream.next();
    expect(produced).toEqual(['a.jpg']);
  });

  it('fails the stream when a source fails, instead of writing a truncated archive', async () => {
    async function* broken() {
      yield Buffer.from('start');
      throw new Error('storage went away');
    }
    await expect(zipBuffer([{ name: 'x.jpg', data: broken(), compress: true }])).rejects.toThrow(
      'storage went away',
    );
  });
});

describe('zip reader: what it refuses', () => {
  it('refuses a file that is not a ZIP with 415', async () => {
    await expect(listZip(Buffer.from('GIF89a, not an archive at all'))).rejects.toThrow(
      UnsupportedMediaTypeError,
    );
    await expect(listZip(Buffer.alloc(0))).rejects.toThrow(UnsupportedMediaTypeError);
    const truncated = rawZip([{ name: 'a.jpg', data: Buffer.from('x') }]).subarray(0, 40);
    await expect(listZip(truncated)).rejects.toThrow(UnsupportedMediaTypeError);
  });

  it.each([
    ['../evil.jpg', /climbs out/],
    ['photos/../../evil.jpg', /climbs out/],
    ['..\\evil.jpg', /climbs out/],
    ['/etc/passwd.jpg', /absolute path/],
    ['C:\\Windows\\evil.jpg', /absolute path/],
    ['\\\\server\\share\\evil.jpg', /absolute path/],
    ['evil\u0000.jpg', /control characters/],
  ])('refuses the entry %j with 400', async (name, reason) => {
    const archive = rawZip([
      { name: 'ok.jpg', data: Buffer.from('x') },
      { name, data: Buffer.from('y') },
    ]);
    await expect(listZip(archive)).rejects.toThrow(BadRequestError);
    expect(await message(() => listZip(archive))).toMatch(reason);
  });

  it('refuses a symbolic link and other special files', async () => {
    const link = rawZip([{ name: 'link.jpg', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 }]);
    expect(await message(() => listZip(link))).toMatch(/BadRequestError: .*"link.jpg" is a symbolic link/);
    const fifo = rawZip([{ name: 'pipe.jpg', unixMode: 0o010644 }]);
    expect(await message(() => listZip(fifo))).toMatch(/not a regular file/);
  });

  it('refuses a declared 200 MB entry (a bomb from a small deflate stream) with 413, naming the limit', async () => {
    // 60 MB of zeros deflate to about 60 KB; the header claims 200 MB.
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const bomb = rawZip([{ name: 'bomb.jpg', data: zeros, deflate: true, declaredSize: 200 * 1024 * 1024 }]);
    expect(bomb.length).toBeLessThan(100 * 1024);
    await expect(listZip(bomb)).rejects.toThrow(PayloadTooLargeError);
    expect(await message(() => listZip(bomb))).toMatch(/limit: entry size/);
  });

  it('counts what really inflates: a header that understates a bomb is stopped at its declared size', async () => {
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const liar = rawZip([{ name: 'small.jpg', data: zeros, deflate: true, declaredSize: 1000 }]);
    const [entry] = (await listZip(liar)).files;
    await expect(readZipEntry(liar, entry!, zipBudget(DEFAULT_ZIP_LIMITS))).rejects.toThrow(
      PayloadTooLargeError,
    );
    // yauzl (validateEntrySizes) stops it one byte past the 1000 it declares, long before any other limit.
    expect(await message(() => readZipEntry(liar, entry!, zipBudget(DEFAULT_ZIP_LIMITS)))).toMatch(
      /limit: declared size/,
    );
  });

  it('refuses a ratio over 100 and a total over the limit', async () => {
    const dense = Buffer.alloc(3 * 1024 * 1024, 7);
    expect(await message(() => listZip(rawZip([{ name: 'dense.jpg', data: dense, deflate: true }])))).toMatch(
      /limit: compression ratio/,
    );
    const limits = { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 10_000 };
    const many = rawZip(
      Array.from({ length: 3 }, (_, i) => ({ name: `p${i}.jpg`, data: Buffer.alloc(4000, i) })),
    );
    expect(await message(() => listZip(many, limits))).toMatch(/413|limit: total uncompressed size/);
    await expect(listZip(many, limits)).rejects.toThrow(PayloadTooLargeError);
  });

  it('refuses more entries than the limit', async () => {
    const limits = { ...DEFAULT_ZIP_LIMITS, maxEntries: 2 };
    const three = rawZip(['a.jpg', 'b.jpg', 'c.jpg'].map((name) => ({ name, data: Buffer.from(name) })));
    expect(await message(() => listZip(three, limits))).toMatch(/more than 2 files \(limit: entries\)/);
  });

  it('refuses entries whose data overlap (the trick of the densest bombs)', async () => {
    const archive = rawZip([
      { name: 'a.jpg', data: Buffer.from('aaaa') },
      { name: 'b.jpg', data: Buffer.from('bbbb') },
    ]);
    // Point the second central record at the first entry's local header.
    const central = archive.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), archive.indexOf('b.jpg') + 1);
    const second = archive.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), central + 1);
    archive.writeUInt32LE(0, second + 42);
    expect(await message(() => listZip(archive))).toMatch(/overlaps/);
  });
});

describe('zip reader: what it lets through', () => {
  it('ignores directories, __MACOSX and dotfiles, and normalises names', async () => {
    const archive = rawZip([
      { name: 'front/' },
      { name: 'front/car1.jpg', data: Buffer.from('1') },
      { name: '__MACOSX/front/._car1.jpg', data: Buffer.from('junk') },
      { name: '.DS_Store', data: Buffer.from('junk') },
      { name: 'front/.hidden/x.jpg', data: Buffer.from('junk') },
      { name: './side\\car2.jpg', data: Buffer.from('2') },
      { name: 'inner.zip', data: Buffer.from('PK\x03\x04') },
    ]);
    const listing = await listZip(archive);
    expect(listing.files.map((entry) => entry.name)).toEqual([
      'front/car1.jpg',
      'side/car2.jpg',
      'inner.zip',
    ]);
    expect(listing.ignored).toBe(4);
  });

  it('reports an unreadable entry on its own, as ZipEntryError, without refusing the archive', async () => {
    const archive = rawZip([
      { name: 'good.jpg', data: Buffer.from('fine') },
      { name: 'bad.jpg', data: Buffer.from('data'), crc: 12345 },
      // Traditional encryption puts a 12-byte header before the data: stored size = size + 12.
      { name: 'secret.jpg', data: Buffer.from('0123456789abdata'), declaredSize: 4, flags: 1 },
      { name: 'bzip.jpg', data: Buffer.from('data'), method: 12 },
    ]);
    const budget = zipBudget(DEFAULT_ZIP_LIMITS);
    const [good, bad, secret, bzip] = (await listZip(archive)).files;
    expect((await readZipEntry(archive, good!, budget)).toString()).toBe('fine');
    await expect(readZipEntry(archive, bad!, budget)).rejects.toThrow(ZipEntryError);
    expect(await message(() => readZipEntry(archive, secret!, budget))).toMatch(/encrypted/);
    expect(await message(() => readZipEntry(archive, bzip!, budget))).toMatch(/method 12/);
  });

  it('keeps a nested archive as an ordinary entry (the batch decides to skip it)', async () => {
    const archive = rawZip([{ name: 'more/photos.zip', data: rawZip([{ name: 'x.jpg' }]) }]);
    expect((await readAll(archive))[0]!.name).toBe('more/photos.zip');
  });

  it('makes safe relative paths', () => {
    expect(safeRelativePath('a//b/./c.jpg')).toBe('a/b/c.jpg');
    expect(safeRelativePath('a\\b.jpg')).toBe('a/b.jpg');
    expect(safeRelativePath('..foo/bar..jpg')).toBe('..foo/bar..jpg');
  });
});
