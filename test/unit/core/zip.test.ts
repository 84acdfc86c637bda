import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ZIP_LIMITS,
  listZip,
  readZipEntry,
  safeRelativePath,
  ZipEntryError,
  type ZipLimits,
  zipBudget,
} from '#core/archive/zip-reader.ts';
import { zipBuffer, zipStream } from '#core/archive/zip-writer.ts';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#core/errors.ts';

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

const readAll = (archive: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS) => {
  const budget = zipBudget(limits);
  return listZip(archive, limits).files.map((entry) => ({
    name: entry.name,
    data: readZipEntry(archive, entry, budget, limits),
  }));
};

const message = (fn: () => unknown): string => {
  try {
    fn();
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
    const entries = readAll(archive);
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
    const listing = listZip(archive);
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
  it('refuses a file that is not a ZIP with 415', () => {
    expect(() => listZip(Buffer.from('GIF89a, not an archive at all'))).toThrow(UnsupportedMediaTypeError);
    expect(() => listZip(Buffer.alloc(0))).toThrow(UnsupportedMediaTypeError);
    const truncated = rawZip([{ name: 'a.jpg', data: Buffer.from('x') }]).subarray(0, 40);
    expect(() => listZip(truncated)).toThrow(UnsupportedMediaTypeError);
  });

  it.each([
    ['../evil.jpg', /climbs out/],
    ['photos/../../evil.jpg', /climbs out/],
    ['..\\evil.jpg', /climbs out/],
    ['/etc/passwd.jpg', /absolute path/],
    ['C:\\Windows\\evil.jpg', /absolute path/],
    ['\\\\server\\share\\evil.jpg', /absolute path/],
    ['evil\u0000.jpg', /control characters/],
  ])('refuses the entry %j with 400', (name, reason) => {
    const archive = rawZip([
      { name: 'ok.jpg', data: Buffer.from('x') },
      { name, data: Buffer.from('y') },
    ]);
    expect(() => listZip(archive)).toThrow(BadRequestError);
    expect(message(() => listZip(archive))).toMatch(reason);
  });

  it('refuses a symbolic link and other special files', () => {
    const link = rawZip([{ name: 'link.jpg', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 }]);
    expect(message(() => listZip(link))).toMatch(/BadRequestError: .*"link.jpg" is a symbolic link/);
    const fifo = rawZip([{ name: 'pipe.jpg', unixMode: 0o010644 }]);
    expect(message(() => listZip(fifo))).toMatch(/not a regular file/);
  });

  it('refuses a declared 200 MB entry (a bomb from a small deflate stream) with 413, naming the limit', () => {
    // 60 MB of zeros deflate to about 60 KB; the header claims 200 MB.
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const bomb = rawZip([{ name: 'bomb.jpg', data: zeros, deflate: true, declaredSize: 200 * 1024 * 1024 }]);
    expect(bomb.length).toBeLessThan(100 * 1024);
    expect(() => listZip(bomb)).toThrow(PayloadTooLargeError);
    expect(message(() => listZip(bomb))).toMatch(/limit: entry size/);
  });

  it('counts what really inflates: a header that understates a bomb is stopped at the limit', () => {
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const liar = rawZip([{ name: 'small.jpg', data: zeros, deflate: true, declaredSize: 1000 }]);
    const [entry] = listZip(liar).files;
    expect(() => readZipEntry(liar, entry!, zipBudget(DEFAULT_ZIP_LIMITS))).toThrow(PayloadTooLargeError);
    expect(message(() => readZipEntry(liar, entry!, zipBudget(DEFAULT_ZIP_LIMITS)))).toMatch(
      /limit: compression ratio/,
    );
  });

  it('refuses a ratio over 100 and a total over the limit', () => {
    const dense = Buffer.alloc(3 * 1024 * 1024, 7);
    expect(message(() => listZip(rawZip([{ name: 'dense.jpg', data: dense, deflate: true }])))).toMatch(
      /limit: compression ratio/,
    );
    const limits = { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 10_000 };
    const many = rawZip(
      Array.from({ length: 3 }, (_, i) => ({ name: `p${i}.jpg`, data: Buffer.alloc(4000, i) })),
    );
    expect(message(() => listZip(many, limits))).toMatch(/413|limit: total uncompressed size/);
    expect(() => listZip(many, limits)).toThrow(PayloadTooLargeError);
  });

  it('refuses more entries than the limit', () => {
    const limits = { ...DEFAULT_ZIP_LIMITS, maxEntries: 2 };
    const three = rawZip(['a.jpg', 'b.jpg', 'c.jpg'].map((name) => ({ name, data: Buffer.from(name) })));
    expect(message(() => listZip(three, limits))).toMatch(/more than 2 files \(limit: entries\)/);
  });

  it('refuses entries whose data overlap (the trick of the densest bombs)', () => {
    const archive = rawZip([
      { name: 'a.jpg', data: Buffer.from('aaaa') },
      { name: 'b.jpg', data: Buffer.from('bbbb') },
    ]);
    // Point the second central record at the first entry's local header.
    const central = archive.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), archive.indexOf('b.jpg') + 1);
    const second = archive.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), central + 1);
    archive.writeUInt32LE(0, second + 42);
    expect(message(() => listZip(archive))).toMatch(/overlaps/);
  });
});

describe('zip reader: what it lets through', () => {
  it('ignores directories, __MACOSX and dotfiles, and normalises names', () => {
    const archive = rawZip([
      { name: 'front/' },
      { name: 'front/car1.jpg', data: Buffer.from('1') },
      { name: '__MACOSX/front/._car1.jpg', data: Buffer.from('junk') },
      { name: '.DS_Store', data: Buffer.from('junk') },
      { name: 'front/.hidden/x.jpg', data: Buffer.from('junk') },
      { name: './side\\car2.jpg', data: Buffer.from('2') },
      { name: 'inner.zip', data: Buffer.from('PK\x03\x04') },
    ]);
    const listing = listZip(archive);
    expect(listing.files.map((entry) => entry.name)).toEqual([
      'front/car1.jpg',
      'side/car2.jpg',
      'inner.zip',
    ]);
    expect(listing.ignored).toBe(4);
  });

  it('reports an unreadable entry on its own, as ZipEntryError, without refusing the archive', () => {
    const archive = rawZip([
      { name: 'good.jpg', data: Buffer.from('fine') },
      { name: 'bad.jpg', data: Buffer.from('data'), crc: 12345 },
      { name: 'secret.jpg', data: Buffer.from('data'), flags: 1 },
      { name: 'bzip.jpg', data: Buffer.from('data'), method: 12 },
    ]);
    const budget = zipBudget(DEFAULT_ZIP_LIMITS);
    const [good, bad, secret, bzip] = listZip(archive).files;
    expect(readZipEntry(archive, good!, budget).toString()).toBe('fine');
    expect(() => readZipEntry(archive, bad!, budget)).toThrow(ZipEntryError);
    expect(message(() => readZipEntry(archive, secret!, budget))).toMatch(/encrypted/);
    expect(message(() => readZipEntry(archive, bzip!, budget))).toMatch(/method 12/);
  });

  it('keeps a nested archive as an ordinary entry (the batch decides to skip it)', () => {
    const archive = rawZip([{ name: 'more/photos.zip', data: rawZip([{ name: 'x.jpg' }]) }]);
    expect(readAll(archive)[0]!.name).toBe('more/photos.zip');
  });

  it('makes safe relative paths', () => {
    expect(safeRelativePath('a//b/./c.jpg')).toBe('a/b/c.jpg');
    expect(safeRelativePath('a\\b.jpg')).toBe('a/b.jpg');
    expect(safeRelativePath('..foo/bar..jpg')).toBe('..foo/bar..jpg');
  });
});
