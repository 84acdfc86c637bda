import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';

type FileKind = 'asset' | 'result';

/** Something the service stores for a caller (spec 2.6): an uploaded asset or a result of one of their jobs. */
export interface FileRecord {
  /** From an atomic counter: unique and increasing (with gaps), so it doubles as the listing cursor. */
  fileId: number;
  ownerId: string;
  kind: FileKind;
  name: string;
  contentType: string;
  bytes: number;
  /** Storage key of the bytes; deleting the file deletes it. */
  key: string;
  /** Result path for results; null for assets, which are only ever used through `asset_id`. */
  url: string | null;
  jobId: string | null;
  assetId: string | null;
  createdAt: string;
  expiresAt: string;
}

/** The File object of spec 2.6. Both `job_id` and `asset_id` are always present, one of them null. */
export const fileResource = (file: FileRecord) => ({
  file_id: file.fileId,
  kind: file.kind,
  name: file.name,
  content_type: file.contentType,
  bytes: file.bytes,
  url: file.url,
  job_id: file.jobId,
  asset_id: file.assetId,
  created_at: file.createdAt,
  expires_at: file.expiresAt,
});

export const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;

export interface PageQuery {
  limit: number;
  /** Only files with a smaller id; null starts at the newest. */
  before: number | null;
}

/**
 * A decimal integer parameter: digits only (no sign, point, exponent or spaces), at most 16 of them, so
 * `1.0`, `1e3` and ` 7` are refused rather than read as numbers. What is not digits reaches the integer
 * check as the string it was, which refuses it with the parameter's message.
 */
const DIGITS = /^\d{1,16}$/;
const fromDigits = (raw: unknown) => (typeof raw === 'string' && DIGITS.test(raw) ? Number(raw) : raw);
const integer = (name: string) => z.int({ error: `${name} must be a non-negative integer` });
const between = `limit must be between 1 and ${MAX_PAGE_SIZE}`;

/** The query of GET /files (spec 4): `limit` 1..100 (default 25) and the cursor `before`. */
export const pageQuerySchema = builtOnFirstUse(() =>
  z.object({
    limit: z
      .preprocess(
        fromDigits,
        integer('limit').min(1, { error: between }).max(MAX_PAGE_SIZE, { error: between }),
      )
      .default(DEFAULT_PAGE_SIZE),
    before: z
      .preprocess(fromDigits, integer('before').min(0, { error: 'before must be a non-negative integer' }))
      .optional(),
  }),
);

/** The `{file_id}` of DELETE /files/{file_id}: a positive integer. */
export const fileIdSchema = builtOnFirstUse(() =>
  z.preprocess(fromDigits, integer('file_id').min(1, { error: 'file_id must be a positive integer' })),
);

/**
 * Cut a page from up to `limit + 1` rows, newest first. The extra row only says that more exist:
 * the cursor is the last id shown, and `before=<cursor>` continues right after it.
 */
export function pageOf<T extends { fileId: number }>(
  rows: T[],
  limit: number,
): { items: T[]; nextCursor: number | null } {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.fileId : null };
}
