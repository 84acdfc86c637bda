import { newJobId } from '../jobs/ids.ts';
import { storageKeys } from '../storage-layout.ts';

/**
 * A direct upload (POST /uploads): the client PUTs its file straight to storage with a presigned URL,
 * past the largest body a request may carry inline (MAX_INLINE_BODY_BYTES, about 4.45 MiB), then names it as `upload_id` wherever a source is taken.
 * Usable by any number of jobs, assets and batches of its owner until `expiresAt` (docs/decisions/0036-direct-uploads-and-size-limits.md).
 */
export interface Upload {
  id: string;
  ownerId: string;
  kind: UploadKind;
  /** As declared, and signed into the URL: the PUT must send exactly this type. */
  contentType: string;
  /** Declared size, signed into the URL as Content-Length; the stored object must have exactly this. */
  bytes: number;
  filename: string | null;
  /** Storage key under `uploads/<id>/`. */
  key: string;
  createdAt: string;
  /** The presigned URL stops working at this time. */
  urlExpiresAt: string;
  /** After this an `upload_id` reference answers 410. */
  expiresAt: string;
}

export type UploadKind = 'photo' | 'archive';

/** Accepted declared types: the bytes are checked again when the upload is used. */
export const UPLOAD_CONTENT_TYPES = {
  'image/jpeg': 'photo',
  'image/png': 'photo',
  'image/webp': 'photo',
  'application/zip': 'archive',
  'application/x-zip-compressed': 'archive',
} as const satisfies Record<string, UploadKind>;

export type UploadContentType = keyof typeof UPLOAD_CONTENT_TYPES;

/** The presigned URL is short-lived: long enough to send MAX_ARCHIVE_BYTES over a slow line. */
export const UPLOAD_URL_SECONDS = 60 * 60;
/** An upload can be used as a source this long after it was created. */
export const UPLOAD_TTL_HOURS = 24;
/** How long after expiry a reference still answers 410 rather than 404. */
export const UPLOAD_REMEMBERED_DAYS = 7;

export const UPLOAD_ID = /^upl_[0-9a-z]{24}$/;
export const newUploadId = (): string => `upl_${newJobId().slice('job_'.length)}`;

const EXTENSIONS: Record<UploadContentType, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'application/zip': 'zip',
  'application/x-zip-compressed': 'zip',
};

/** The key says nothing the caller chose but the extension of the declared type. */
export const uploadKey = (id: string, contentType: UploadContentType): string =>
  storageKeys.upload(id, EXTENSIONS[contentType]);

/** The answer of POST /uploads. */
export const uploadResource = (upload: Upload, url: string) => ({
  upload_id: upload.id,
  url,
  method: 'PUT' as const,
  headers: { 'content-type': upload.contentType },
  max_bytes: upload.bytes,
  expires_at: upload.urlExpiresAt,
  usable_until: upload.expiresAt,
});
