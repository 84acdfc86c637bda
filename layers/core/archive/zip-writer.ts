import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw } from 'node:zlib';

/** One file of an archive being written. */
export interface ZipSource {
  /** Relative path inside the archive, `/`-separated. */
  name: string;
  /** The bytes, or the bytes as they arrive (an object streamed from storage). */
  data: Buffer | AsyncIterable<Uint8Array>;
  /** Deflate it; already-compressed formats (JPEG, PNG, WEBP) are stored as they are. */
  compress: boolean;
  modified?: Date;
}

const SIG_LOCAL = 0x04034b50;
const SIG_DESCRIPTOR = 0x08074b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const FLAG_DESCRIPTOR = 0x8;
const FLAG_UTF8 = 0x800;
const VERSION_NEEDED = 20;
const MADE_BY_UNIX = (3 << 8) | VERSION_NEEDED;
const REGULAR_FILE_0644 = (0o100644 << 16) >>> 0;
const MAX_32 = 0xffffffff;

interface Written {
  name: Buffer;
  flags: number;
  method: number;
  time: number;
  date: number;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
}

/**
 * A ZIP archive as a stream of chunks, written as the entries' data arrives: each entry's sizes and
 * CRC-32 follow its data in a data descriptor, so nothing is held but the entry being copied.
 * No ZIP64: an archive past 4 GB or 65,535 entries is refused with an error mid-stream.
 */
export async function* zipStream(
  entries: AsyncIterable<ZipSource> | Iterable<ZipSource>,
): AsyncGenerator<Buffer> {
  const written: Written[] = [];
  let offset = 0;
  const emit = (chunk: Buffer): Buffer => {
    offset += chunk.length;
    return chunk;
  };

  for await (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const flags = FLAG_DESCRIPTOR | (/^[\x20-\x7e]*$/.test(entry.name) ? 0 : FLAG_UTF8);
    const method = entry.compress ? 8 : 0;
    const { time, date } = dosDateTime(entry.modified ?? new Date());
    const record: Written = { name, flags, method, time, date, crc: 0, compressedSize: 0, size: 0, offset };
    yield emit(localHeader(record));

    const counted = async function* (): AsyncGenerator<Buffer> {
      const chunks = Buffer.isBuffer(entry.data) ? [entry.data] : entry.data;
      for await (const raw of chunks) {
        const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
        record.crc = crc32(chunk, record.crc);
        record.size += chunk.length;
        yield chunk;
      }
    };
    const output = entry.compress ? deflated(counted()) : counted();
    for await (const chunk of output) {
      record.compressedSize += chunk.length;
      yield emit(chunk);
    }
    if (record.size > MAX_32 || record.compressedSize > MAX_32 || offset > MAX_32) {
      throw new RangeError('The archive would need ZIP64 (over 4 GB), which is not written');
    }
    yield emit(dataDescriptor(record));
    written.push(record);
  }

  if (written.length > 0xffff) throw new RangeError('The archive would need ZIP64 (over 65,535 entries)');
  const centralOffset = offset;
  for (const record of written) yield emit(centralHeader(record));
  if (offset > MAX_32) throw new RangeError('The archive would need ZIP64 (over 4 GB), which is not written');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(SIG_EOCD, 0);
  end.writeUInt16LE(written.length, 8);
  end.writeUInt16LE(written.length, 10);
  end.writeUInt32LE(offset - centralOffset, 12);
  end.writeUInt32LE(centralOffset, 16);
  yield emit(end);
}

/** A whole archive in memory: for tests and small archives only. */
export async function zipBuffer(entries: AsyncIterable<ZipSource> | Iterable<ZipSource>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of zipStream(entries)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function* deflated(input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const deflate = createDeflateRaw();
  // Feeding runs beside the reading below; a failing source destroys the deflater, which ends the loop.
  const feeding = pipeline(Readable.from(input), deflate).catch((error: unknown) => {
    deflate.destroy(error as Error);
  });
  try {
    for await (const chunk of deflate) yield chunk as Buffer;
  } finally {
    deflate.destroy();
    await feeding;
  }
}

function localHeader(record: Written): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(SIG_LOCAL, 0);
  header.writeUInt16LE(VERSION_NEEDED, 4);
  header.writeUInt16LE(record.flags, 6);
  header.writeUInt16LE(record.method, 8);
  header.writeUInt16LE(record.time, 10);
  header.writeUInt16LE(record.date, 12);
  // CRC-32 and sizes are zero here: they follow the data in its descriptor (flag 3).
  header.writeUInt16LE(record.name.length, 26);
  return Buffer.concat([header, record.name]);
}

function dataDescriptor(record: Written): Buffer {
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(SIG_DESCRIPTOR, 0);
  descriptor.writeUInt32LE(record.crc, 4);
  descriptor.writeUInt32LE(record.compressedSize, 8);
  descriptor.writeUInt32LE(record.size, 12);
  return descriptor;
}

function centralHeader(record: Written): Buffer {
  const header = Buffer.alloc(46);
  header.writeUInt32LE(SIG_CENTRAL, 0);
  header.writeUInt16LE(MADE_BY_UNIX, 4);
  header.writeUInt16LE(VERSION_NEEDED, 6);
  header.writeUInt16LE(record.flags, 8);
  header.writeUInt16LE(record.method, 10);
  header.writeUInt16LE(record.time, 12);
  header.writeUInt16LE(record.date, 14);
  header.writeUInt32LE(record.crc, 16);
  header.writeUInt32LE(record.compressedSize, 20);
  header.writeUInt32LE(record.size, 24);
  header.writeUInt16LE(record.name.length, 28);
  header.writeUInt32LE(REGULAR_FILE_0644, 38);
  header.writeUInt32LE(record.offset, 42);
  return Buffer.concat([header, record.name]);
}

/** MS-DOS date and time (local fields, 2-second steps), here in UTC; 1980 is the earliest it can say. */
function dosDateTime(at: Date): { time: number; date: number } {
  const year = Math.max(1980, at.getUTCFullYear());
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}
