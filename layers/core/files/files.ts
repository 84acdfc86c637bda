import { BadRequestError } from '../errors.ts';

export type FileKind = 'asset' | 'result';

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
export const MAX_PAGE_SIZE = 100;

export interface PageQuery {
  limit: number;
  /** Only files with a smaller id; null starts at the newest. */
  before: number | null;
}

const DIGITS = /^\d{1,16}$/;

function integerParam(name: string, raw: string): number {
  const value = Number(raw);
  if (!DIGITS.test(raw) || !Number.isSafeInteger(value)) {
    throw new BadRequestError(`${name} must be a non-negative integer`);
  }
  return value;
}

/** `limit` 1..100 (default 25) and `before` (spec 4, GET /files). */
export function parsePageQuery(query: Record<string, string | undefined>): PageQuery {
  const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : integerParam('limit', query.limit);
  if (limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new BadRequestError(`limit must be between 1 and ${MAX_PAGE_SIZE}`);
  }
  const before = query.before === undefined ? null : integerParam('before', query.before);
  return { limit, before };
}

export function parseFileId(raw: string | undefined): number {
  const fileId = integerParam('file_id', raw ?? '');
  if (fileId < 1) throw new BadRequestError('file_id must be a positive integer');
  return fileId;
}

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
