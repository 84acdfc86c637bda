import { BadRequestError, PayloadTooLargeError } from '../errors.ts';
import { formatBytes, GB, MB } from '../units.ts';

/**
 * What an archive from a stranger may be: the service's own policy, applied to what the ZIP library
 * reports. The library (yauzl, behind the `ArchiveReader` port) parses the bytes and checks that each
 * entry inflates to exactly its declared size; this module decides which entries are content, which
 * names are safe, and how much may be inflated in all.
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

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 1000,
  maxRecords: 10_000,
  maxTotalBytes: 4 * GB,
  maxEntryBytes: 50 * MB,
  maxRatio: 100,
  ratioFloorBytes: 1 * MB,
};

/** One central directory record as the ZIP library read it, before any policy. */
export interface ZipRecord {
  rawName: Uint8Array;
  flags: number;
  /** Upper byte: the host system that wrote it (3 = Unix, whose mode sits in `externalAttributes`). */
  versionMadeBy: number;
  externalAttributes: number;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

export interface ZipEntry {
  /** Relative path, `/`-separated, without empty, `.` or `..` segments. */
  name: string;
  /** 0 stored, 8 deflated; anything else cannot be read here. */
  method: number;
  encrypted: boolean;
  crc32: number;
  compressedSize: number;
  /** As declared by the central directory; the reader checks it against what really comes out. */
  size: number;
  localHeaderOffset: number;
  /** Position of the record in the central directory: how the reader finds the entry again. */
  record: number;
}

export interface ZipListing {
  /** Regular files in central directory order. */
  files: ZipEntry[];
  /** Directories, `__MACOSX/` resource forks and dotfiles: not content. */
  ignored: number;
}

/** Bytes still allowed for the whole archive; shared by the reads of one archive's entries. */
export interface ZipBudget {
  remaining: number;
}

export const zipBudget = (limits: ZipLimits): ZipBudget => ({ remaining: limits.maxTotalBytes });

const FLAG_ENCRYPTED = 0x1;
const FLAG_UTF8 = 0x800;
const HOST_UNIX = 3;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const DOS_DIRECTORY = 0x10;
const LOCAL_HEADER_BYTES = 30;

/** @throws PayloadTooLargeError before a directory with more records than the limit is read. */
export function checkRecordCount(records: number, limits: ZipLimits): void {
  if (records > limits.maxRecords) {
    throw new PayloadTooLargeError(
      `archive has ${records} entries; at most ${limits.maxRecords} are read (limit: entries)`,
    );
  }
}

/**
 * Folds the central directory into a listing, one record at a time (`add`), then checks the whole
 * (`done`). Records are judged by the directory, never by the local headers' claims.
 * @throws BadRequestError (400) for an entry that is a link or special file, or whose name is absolute,
 *   climbs out with `..` or holds control characters; for entries whose data overlap.
 * @throws PayloadTooLargeError (413) naming the limit when the declared contents exceed one.
 */
export function zipDirectory(limits: ZipLimits) {
  const files: ZipEntry[] = [];
  let ignored = 0;
  let declaredTotal = 0;
  let index = 0;
  const spans: Array<{ start: number; minEnd: number; name: string }> = [];
  return {
    add(record: ZipRecord): void {
      const at = index++;
      const shown = decodeName(record.rawName, record.flags);
      const name = safeRelativePath(shown);
      const external = record.externalAttributes;
      const mode = record.versionMadeBy >>> 8 === HOST_UNIX ? (external >>> 16) & S_IFMT : 0;
      if (mode === S_IFLNK) throw new BadRequestError(`archive entry "${shown}" is a symbolic link`);
      const isDirectory =
        shown.endsWith('/') || shown.endsWith('\\') || mode === S_IFDIR || (external & DOS_DIRECTORY) !== 0;
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) {
        throw new BadRequestError(`archive entry "${shown}" is not a regular file`);
      }
      if (isDirectory || name === '' || isIgnored(name)) {
        ignored++;
        return;
      }
      const { size, compressedSize } = record;
      if (size > limits.maxEntryBytes) {
        throw new PayloadTooLargeError(
          `archive entry "${name}" expands to ${formatBytes(size)}; at most ${formatBytes(limits.maxEntryBytes)} per entry (limit: entry size)`,
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
          `archive expands to more than ${formatBytes(limits.maxTotalBytes)} (limit: total uncompressed size)`,
        );
      }
      files.push({
        name,
        method: record.method,
        encrypted: (record.flags & FLAG_ENCRYPTED) !== 0,
        crc32: record.crc32,
        compressedSize,
        size,
        localHeaderOffset: record.localHeaderOffset,
        record: at,
      });
      if (files.length > limits.maxEntries) {
        throw new PayloadTooLargeError(`archive holds more than ${limits.maxEntries} files (limit: entries)`);
      }
      // Kept for the overlap check: the local header repeats the name, so its data starts after both.
      spans.push({
        start: record.localHeaderOffset,
        minEnd: LOCAL_HEADER_BYTES + record.rawName.length + compressedSize,
        name,
      });
    },
    done(centralDirectoryOffset: number): ZipListing {
      checkNoOverlap(spans, centralDirectoryOffset);
      return { files, ignored };
    },
  };
}

/**
 * Entries whose data overlap are how the densest bombs reuse one compressed stream many times; a
 * well-formed archive never has them. Each entry needs at least its local header and its compressed
 * data before the next entry (or the directory) begins.
 */
function checkNoOverlap(
  entries: Array<{ start: number; minEnd: number; name: string }>,
  centralDirectoryOffset: number,
): void {
  const sorted = [...entries].sort((a, b) => a.start - b.start);
  for (let i = 0; i < sorted.length; i++) {
    const span = sorted[i]!;
    const next = sorted[i + 1];
    const end = span.start + span.minEnd;
    if ((next && end > next.start) || end > centralDirectoryOffset) {
      throw new BadRequestError(`archive is malformed: entry "${span.name}" overlaps another entry`);
    }
  }
}

/**
 * The most one entry may inflate to, and which limit says so: its own size, what is left of the
 * archive's total, and its compression ratio. One byte more tells "over" from "at".
 */
export function entryCap(
  entry: ZipEntry,
  budget: ZipBudget,
  limits: ZipLimits,
): { cap: number; limit: string } {
  const caps: Array<[number, string]> = [
    [limits.maxEntryBytes, 'entry size'],
    [budget.remaining, 'total uncompressed size'],
    [Math.max(limits.ratioFloorBytes, entry.compressedSize * limits.maxRatio), 'compression ratio'],
  ];
  const [cap, limit] = caps.reduce((a, b) => (b[0] < a[0] ? b : a));
  return { cap, limit };
}

export const tooLarge = (entry: ZipEntry, limit: string): PayloadTooLargeError =>
  new PayloadTooLargeError(`archive entry "${entry.name}" expands too far (limit: ${limit})`);

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const LATIN1 = new TextDecoder('latin1');

/** Flag 11 says UTF-8; many tools write UTF-8 without it, so that is tried before Latin-1. */
function decodeName(raw: Uint8Array, flags: number): string {
  if (flags & FLAG_UTF8) return new TextDecoder('utf-8').decode(raw);
  try {
    return UTF8.decode(raw);
  } catch {
    return LATIN1.decode(raw);
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
