import { type PassThrough, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, type S3Client } from '@aws-sdk/client-s3';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { BadRequestError, UnsupportedMediaTypeError, ZipEntryError } from '#core/errors.ts';
import {
  checkRecordCount,
  entryCap,
  tooLarge,
  type ZipBudget,
  type ZipEntry,
  type ZipLimits,
  zipDirectory,
} from '#core/limits/archive.ts';
import type { ArchiveReader, ArchiveWriter, OpenedArchive, ZipSource } from '#core/ports.ts';
import { missingObject } from './s3-objects.ts';

/** Bytes of an archive by position: all that the reader needs, so it never holds the archive whole. */
export interface RangeSource {
  size: number;
  /** Bytes `start` (inclusive) to `end` (exclusive), as they arrive. */
  read(start: number, end: number): AsyncIterable<Uint8Array>;
}

export const bufferRanges = (archive: Buffer): RangeSource => ({
  size: archive.length,
  async *read(start, end) {
    yield archive.subarray(start, end);
  },
});

/** Small reads (directory records, local headers) come from blocks this large, one request a block. */
const BLOCK_BYTES = 256 * 1024;
const CACHED_BLOCKS = 16;

/**
 * An object in S3 read by HTTP ranges. yauzl reads the directory record by record (a few dozen bytes
 * each): those small reads are served from a few cached blocks, so a 1,000-entry directory costs a
 * handful of requests; entry data is one ranged request streamed through.
 */
export async function s3Ranges(client: S3Client, bucket: string, key: string): Promise<RangeSource> {
  let size: number;
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    size = head.ContentLength ?? 0;
  } catch (error) {
    if (error instanceof NotFound || error instanceof NoSuchKey) throw missingObject(key, error);
    throw error;
  }
  const get = async (start: number, end: number) => {
    const response = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
    );
    return response.Body as unknown as AsyncIterable<Uint8Array>;
  };
  const blocks = new Map<number, Promise<Buffer>>();
  const block = (index: number): Promise<Buffer> => {
    let cached = blocks.get(index);
    if (!cached) {
      const start = index * BLOCK_BYTES;
      cached = get(start, Math.min(size, start + BLOCK_BYTES)).then(async (body) => {
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(Buffer.from(chunk));
        return Buffer.concat(chunks);
      });
      cached.catch(() => blocks.delete(index));
      blocks.set(index, cached);
      if (blocks.size > CACHED_BLOCKS) blocks.delete(blocks.keys().next().value!);
    }
    return cached;
  };
  return {
    size,
    async *read(start, end) {
      if (end - start > BLOCK_BYTES) {
        yield* await get(start, end);
        return;
      }
      for (let index = Math.floor(start / BLOCK_BYTES); index * BLOCK_BYTES < end; index++) {
        const data = await block(index);
        const offset = index * BLOCK_BYTES;
        yield data.subarray(Math.max(0, start - offset), Math.min(data.length, end - offset));
      }
    },
  };
}

class RangeReader extends yauzl.RandomAccessReader {
  constructor(private readonly source: RangeSource) {
    super();
  }
  override _readStreamForRange(start: number, end: number): Readable {
    return Readable.from(this.source.read(start, end), { objectMode: false });
  }
}

const NOT_A_ZIP = /end of central directory record signature not found/i;

/**
 * Open an archive with yauzl (sizes validated against what inflates) and check its directory against
 * the service's limits (layers/core/limits/archive.ts) as it is read.
 */
export async function openZip(source: RangeSource, limits: ZipLimits): Promise<OpenedArchive> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new RangeReader(source), source.size, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (error) {
    if (NOT_A_ZIP.test(String((error as Error).message)))
      throw new UnsupportedMediaTypeError('archive is not a ZIP file');
    throw malformed(error);
  }
  try {
    checkRecordCount(zip.entryCount, limits);
    const directory = zipDirectory(limits);
    const records: yauzl.Entry[] = [];
    // Where the directory begins: no entry's data may run into it.
    const centralDirectoryOffset = zip.readEntryCursor as unknown as number;
    for await (const record of iterate(zip)) {
      records.push(record);
      directory.add({
        rawName: record.fileNameRaw,
        flags: record.generalPurposeBitFlag,
        versionMadeBy: record.versionMadeBy,
        externalAttributes: record.externalFileAttributes,
        method: record.compressionMethod,
        crc32: record.crc32,
        compressedSize: record.compressedSize,
        size: record.uncompressedSize,
        localHeaderOffset: record.relativeOffsetOfLocalHeader,
      });
    }
    const listing = directory.done(centralDirectoryOffset);
    return {
      listing,
      bytes: source.size,
      entry: (entry, budget) => readEntry(zip, records[entry.record]!, entry, budget, limits),
      async close() {
        zip.close();
      },
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** yauzl's entries, one at a time (lazyEntries), as an async iterable. */
async function* iterate(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const next = new Promise<yauzl.Entry | null>((resolve, reject) => {
      const cleanup = () => {
        zip.off('entry', onEntry);
        zip.off('end', onEnd);
        zip.off('error', onError);
      };
      const onEntry = (entry: yauzl.Entry) => {
        cleanup();
        resolve(entry);
      };
      const onEnd = () => {
        cleanup();
        resolve(null);
      };
      const onError = (error: Error) => {
        cleanup();
        reject(malformed(error));
      };
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    });
    zip.readEntry();
    const entry = await next;
    if (!entry) return;
    yield entry;
  }
}

const malformed = (error: unknown): Error =>
  error instanceof BadRequestError
    ? error
    : new BadRequestError(`archive is malformed: ${(error as Error).message}`, { cause: error });

async function* readEntry(
  zip: yauzl.ZipFile,
  record: yauzl.Entry,
  entry: ZipEntry,
  budget: ZipBudget,
  limits: ZipLimits,
): AsyncGenerator<Buffer> {
  if (entry.encrypted) throw new ZipEntryError('the entry is encrypted');
  if (entry.method !== 0 && entry.method !== 8) {
    throw new ZipEntryError(
      `the entry uses compression method ${entry.method}; only stored and deflate are read`,
    );
  }
  const { cap, limit } = entryCap(entry, budget, limits);
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(record);
  } catch (error) {
    throw new ZipEntryError(`the entry is corrupt: ${(error as Error).message}`, { cause: error });
  }
  let size = 0;
  let crc = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > cap) throw tooLarge(entry, limit);
      budget.remaining -= chunk.length;
      crc = crc32(chunk, crc);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ZipEntryError || error instanceof UnsupportedMediaTypeError) throw error;
    if ((error as { name?: string }).name === 'PayloadTooLargeError') throw error;
    const message = String((error as Error).message);
    // validateEntrySizes: yauzl stops an entry that inflates past the size its directory declares.
    if (/too many bytes in the stream/.test(message)) throw tooLarge(entry, 'declared size');
    throw new ZipEntryError(
      /not enough bytes/.test(message)
        ? 'the entry is corrupt: its size or checksum does not match'
        : 'the entry is corrupt: its data does not inflate',
      { cause: error },
    );
  } finally {
    stream.destroy();
  }
  if (size !== entry.size || crc !== entry.crc32) {
    throw new ZipEntryError('the entry is corrupt: its size or checksum does not match');
  }
}

/** The archives under `bucket`, read by ranges. */
export const s3Archives = (client: S3Client, bucket: string): ArchiveReader => ({
  open: async (key, limits) => openZip(await s3Ranges(client, bucket, key), limits),
});

/**
 * A ZIP archive as a stream, written with yazl (ZIP64 when an entry or the archive needs it): each
 * entry's source is read to its end before the next entry is asked for, so one entry is in flight.
 */
export function zipStream(entries: AsyncIterable<ZipSource> | Iterable<ZipSource>): AsyncGenerator<Buffer> {
  const zip = new yazl.ZipFile();
  const out = zip.outputStream as PassThrough;
  zip.on('error', (error: Error) => out.destroy(error));
  let feeding: Promise<void> | undefined;
  const feed = async () => {
    for await (const entry of entries) {
      const source = Buffer.isBuffer(entry.data) ? Readable.from([entry.data]) : Readable.from(entry.data);
      zip.addReadStream(source, entry.name, {
        compress: entry.compress,
        mtime: entry.modified ?? new Date(),
        mode: 0o100644,
      });
      await finished(source);
    }
    zip.end();
  };
  return (async function* () {
    feeding ??= feed().catch((error: unknown) => {
      out.destroy(error as Error);
    });
    for await (const chunk of out) yield chunk as Buffer;
    await feeding;
  })();
}

export const yazlArchives: ArchiveWriter = { zip: zipStream };

/** A whole archive in memory: for tests and small archives only. */
export async function zipBuffer(entries: AsyncIterable<ZipSource> | Iterable<ZipSource>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of zipStream(entries)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Open an archive held in memory (tests, small archives). */
export const openZipBuffer = (archive: Buffer, limits: ZipLimits): Promise<OpenedArchive> =>
  openZip(bufferRanges(archive), limits);
