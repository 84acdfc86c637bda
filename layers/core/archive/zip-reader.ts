import { crc32, inflateRawSync } from 'node:zlib';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';

/**
 * A ZIP reader for archives that strangers send: it reads the central directory (never the local
 * headers' claims), refuses names that could leave the extraction root, and counts the bytes it
 * really inflates against the limits, so a header that lies cannot make it allocate more than a limit.
 * Stored and deflated entries only; no ZIP64, no encryption, no multi-disk archives.
 */

export interface ZipLimits {
  /** Files (not directories, not ignored entries) the archive may hold. */
  maxEntries: number;
  /** Central directory records of any kind; bounds the parse itself. */
  maxRecords: number;
  /** All entries together, inflated. */
  maxTotalBytes: number;
  /** One entry, inflated. */
  maxEntryBytes: number;
  /** Inflated size over compressed size, for entries larger than `ratioFloorBytes`. */
  maxRatio: number;
  /** Small entries (text, manifests) may compress very well without being a bomb. */
  ratioFloorBytes: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 1000,
  maxRecords: 10_000,
  maxTotalBytes: 500 * MIB,
  maxEntryBytes: 50 * MIB,
  maxRatio: 100,
  ratioFloorBytes: 1 * MIB,
};

export interface ZipEntry {
  /** Relative path, `/`-separated, without empty, `.` or `..` segments. */
  name: string;
  /** 0 stored, 8 deflated; anything else cannot be read here. */
  method: number;
  encrypted: boolean;
  crc32: number;
  compressedSize: number;
  /** As declared by the central directory; `readZipEntry` checks it against what really comes out. */
  size: number;
  localHeaderOffset: number;
}

export interface ZipListing {
  /** Regular files in central directory order. */
  files: ZipEntry[];
  /** Directories, `__MACOSX/` resource forks and dotfiles: not content. */
  ignored: number;
}

/** An entry that cannot be read (unsupported method, encrypted, corrupt); the archive as a whole is fine. */
export class ZipEntryError extends BadRequestError {}

/** Bytes still allowed for the whole archive; shared by the `readZipEntry` calls of one archive. */
export interface ZipBudget {
  remaining: number;
}

export const zipBudget = (limits: ZipLimits): ZipBudget => ({ remaining: limits.maxTotalBytes });

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const EOCD_SIZE = 22;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
const MAX_COMMENT = 0xffff;
const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;
const HOST_UNIX = 3;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const DOS_DIRECTORY = 0x10;

const mb = (bytes: number): string => `${Math.round(bytes / MIB)} MB`;

/**
 * The archive's table of contents, checked.
 * @throws UnsupportedMediaTypeError (415) when the bytes are not a ZIP archive at all.
 * @throws BadRequestError (400) for a malformed archive, ZIP64, or an entry that is a link or whose
 *   name is absolute, climbs out with `..` or holds control characters.
 * @throws PayloadTooLargeError (413) naming the limit when the declared contents exceed one.
 */
export function listZip(archive: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipListing {
  const eocd = findEndOfCentralDirectory(archive);
  if (eocd < 0) throw new UnsupportedMediaTypeError('archive is not a ZIP file');
  if (eocd >= 20 && archive.readUInt32LE(eocd - 20) === SIG_ZIP64_LOCATOR) {
    throw new BadRequestError('archive uses ZIP64, which is not supported; archives must be under 4 GB');
  }
  const disk = archive.readUInt16LE(eocd + 4);
  const cdDisk = archive.readUInt16LE(eocd + 6);
  const recordsHere = archive.readUInt16LE(eocd + 8);
  const records = archive.readUInt16LE(eocd + 10);
  const cdSize = archive.readUInt32LE(eocd + 12);
  const cdOffset = archive.readUInt32LE(eocd + 16);
  if (disk !== 0 || cdDisk !== 0 || recordsHere !== records) {
    throw new BadRequestError('archive spans several disks, which is not supported');
  }
  if (records === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    throw new BadRequestError('archive uses ZIP64, which is not supported; archives must be under 4 GB');
  }
  if (cdOffset + cdSize > eocd) throw new BadRequestError('archive is malformed: bad central directory');
  if (records > limits.maxRecords) {
    throw new PayloadTooLargeError(
      `archive has ${records} entries; at most ${limits.maxRecords} are read (limit: entries)`,
    );
  }

  const files: ZipEntry[] = [];
  let ignored = 0;
  let declaredTotal = 0;
  let at = cdOffset;
  for (let i = 0; i < records; i++) {
    if (at + CENTRAL_SIZE > cdOffset + cdSize || archive.readUInt32LE(at) !== SIG_CENTRAL) {
      throw new BadRequestError('archive is malformed: bad central directory record');
    }
    const madeBy = archive.readUInt16LE(at + 4);
    const flags = archive.readUInt16LE(at + 8);
    const method = archive.readUInt16LE(at + 10);
    const crc = archive.readUInt32LE(at + 16);
    const compressedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const external = archive.readUInt32LE(at + 38);
    const localHeaderOffset = archive.readUInt32LE(at + 42);
    const next = at + CENTRAL_SIZE + nameLength + extraLength + commentLength;
    if (next > cdOffset + cdSize)
      throw new BadRequestError('archive is malformed: bad central directory record');
    const rawName = archive.subarray(at + CENTRAL_SIZE, at + CENTRAL_SIZE + nameLength);
    at = next;

    if (compressedSize === 0xffffffff || size === 0xffffffff || localHeaderOffset === 0xffffffff) {
      throw new BadRequestError('archive uses ZIP64, which is not supported; archives must be under 4 GB');
    }
    const shown = decodeName(rawName, flags);
    const name = safeRelativePath(shown);
    const mode = madeBy >>> 8 === HOST_UNIX ? (external >>> 16) & S_IFMT : 0;
    if (mode === S_IFLNK) throw new BadRequestError(`archive entry "${shown}" is a symbolic link`);
    const isDirectory =
      shown.endsWith('/') || shown.endsWith('\\') || mode === S_IFDIR || (external & DOS_DIRECTORY) !== 0;
    if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
      throw new BadRequestError(`archive entry "${shown}" is not a regular file`);
    }
    if (isDirectory || name === '' || isIgnored(name)) {
      ignored++;
      continue;
    }
    if (size > limits.maxEntryBytes) {
      throw new PayloadTooLargeError(
        `archive entry "${name}" expands to ${mb(size)}; at most ${mb(limits.maxEntryBytes)} per entry (limit: entry size)`,
      );
    }
    if (size > limits.ratioFloorBytes && size > compressedSize * limits.maxRatio) {
      throw new PayloadTooLargeError(
        `archive entry "${name}" expands more than ${limits.maxRatio} times (limit: compression ratio)`,
      );
    }
    declaredTotal += size;
    if (declaredTotal > limits.maxTotalBytes) {
      throw new PayloadTooLargeError(
        `archive expands to more than ${mb(limits.maxTotalBytes)} (limit: total uncompressed size)`,
      );
    }
    files.push({
      name,
      method,
      encrypted: (flags & FLAG_ENCRYPTED) !== 0,
      crc32: crc,
      compressedSize,
      size,
      localHeaderOffset,
    });
    if (files.length > limits.maxEntries) {
      throw new PayloadTooLargeError(`archive holds more than ${limits.maxEntries} files (limit: entries)`);
    }
  }
  checkNoOverlap(archive, files, cdOffset);
  return { files, ignored };
}

/**
 * One entry's bytes, inflated under the limits and checked against its CRC-32 and declared size.
 * @throws PayloadTooLargeError (413) naming the limit the real contents exceed.
 * @throws ZipEntryError (400) when the entry cannot be read: encrypted, unsupported method, corrupt.
 */
export function readZipEntry(
  archive: Buffer,
  entry: ZipEntry,
  budget: ZipBudget,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Buffer {
  if (entry.encrypted) throw new ZipEntryError('the entry is encrypted');
  if (entry.method !== 0 && entry.method !== 8) {
    throw new ZipEntryError(
      `the entry uses compression method ${entry.method}; only stored and deflate are read`,
    );
  }
  const start = dataStart(archive, entry);
  const compressed = archive.subarray(start, start + entry.compressedSize);

  // The most this entry may produce, and which limit says so; one byte more tells "over" from "at".
  const caps: Array<[number, string]> = [
    [limits.maxEntryBytes, 'entry size'],
    [budget.remaining, 'total uncompressed size'],
    [Math.max(limits.ratioFloorBytes, entry.compressedSize * limits.maxRatio), 'compression ratio'],
  ];
  const [cap, limit] = caps.reduce((a, b) => (b[0] < a[0] ? b : a));
  const tooLarge = () =>
    new PayloadTooLargeError(`archive entry "${entry.name}" expands too far (limit: ${limit})`);
  let data: Buffer;
  if (entry.method === 0) {
    data = compressed;
  } else {
    try {
      data = inflateRawSync(compressed, { maxOutputLength: cap + 1 });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
      throw new ZipEntryError('the entry is corrupt: its data does not inflate', { cause: error });
    }
  }
  if (data.length > cap) throw tooLarge();
  budget.remaining -= data.length;
  if (data.length !== entry.size || crc32(data) !== entry.crc32) {
    throw new ZipEntryError('the entry is corrupt: its size or checksum does not match');
  }
  return data;
}

function findEndOfCentralDirectory(archive: Buffer): number {
  const lowest = Math.max(0, archive.length - EOCD_SIZE - MAX_COMMENT);
  for (let at = archive.length - EOCD_SIZE; at >= lowest; at--) {
    if (archive.readUInt32LE(at) !== SIG_EOCD) continue;
    // The comment must run exactly to the end, or these four bytes were data that looked like a signature.
    if (at + EOCD_SIZE + archive.readUInt16LE(at + 20) === archive.length) return at;
  }
  return -1;
}

function dataStart(archive: Buffer, entry: ZipEntry): number {
  const at = entry.localHeaderOffset;
  if (at + LOCAL_SIZE > archive.length || archive.readUInt32LE(at) !== SIG_LOCAL) {
    throw new ZipEntryError('the entry is corrupt: its local header is missing');
  }
  const start = at + LOCAL_SIZE + archive.readUInt16LE(at + 26) + archive.readUInt16LE(at + 28);
  if (start + entry.compressedSize > archive.length) {
    throw new ZipEntryError('the entry is corrupt: its data runs past the end of the archive');
  }
  return start;
}

/**
 * Entries whose data overlap are how the densest bombs reuse one compressed stream many times;
 * a well-formed archive never has them.
 */
function checkNoOverlap(archive: Buffer, files: ZipEntry[], cdOffset: number): void {
  const spans = files
    .map((entry) => {
      let end = entry.localHeaderOffset + entry.compressedSize;
      try {
        end = dataStart(archive, entry) + entry.compressedSize;
      } catch {
        // Unreadable entries are reported one by one when they are read.
      }
      return { start: entry.localHeaderOffset, end, name: entry.name };
    })
    .sort((a, b) => a.start - b.start);
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    const next = spans[i + 1];
    if ((next && span.end > next.start) || span.end > cdOffset) {
      throw new BadRequestError(`archive is malformed: entry "${span.name}" overlaps another entry`);
    }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Flag 11 says UTF-8; many tools write UTF-8 without it, so that is tried before Latin-1. */
function decodeName(raw: Buffer, flags: number): string {
  if (flags & FLAG_UTF8) return raw.toString('utf8');
  try {
    return UTF8.decode(raw);
  } catch {
    return raw.toString('latin1');
  }
}

/**
 * `dir/name.jpg` from whatever the entry calls itself, or a 400 when the name could reach outside the
 * folder it is extracted into: absolute paths, drive letters, `..` segments (with either slash), or
 * control characters. Empty and `.` segments are dropped.
 */
export function safeRelativePath(raw: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw)) {
    throw new BadRequestError(
      `archive entry "${JSON.stringify(raw).slice(1, -1)}" has control characters in its name`,
    );
  }
  const slashed = raw.replaceAll('\\', '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) {
    throw new BadRequestError(`archive entry "${raw}" has an absolute path`);
  }
  const segments = slashed.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..'))
    throw new BadRequestError(`archive entry "${raw}" climbs out of the archive with ..`);
  return segments.join('/');
}

const isIgnored = (name: string): boolean =>
  name.split('/').some((segment, i) => segment.startsWith('.') || (i === 0 && segment === '__MACOSX'));
