import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import { addDays, cleanOriginalName } from '../files/asset-rules.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { Clock, ObjectStore, UploadRepository, UploadTargets } from '../ports.ts';
import {
  newUploadId,
  UPLOAD_CONTENT_TYPES,
  UPLOAD_TTL_HOURS,
  UPLOAD_URL_SECONDS,
  type Upload,
  type UploadContentType,
  uploadKey,
} from '../uploads/upload.ts';

export interface UploadDeps {
  uploads: UploadRepository;
  objects: ObjectStore & UploadTargets;
  clock: Clock;
  /** Largest photo by upload. */
  maxPhotoBytes: number;
  /** Largest archive by upload. */
  maxArchiveBytes: number;
}

/** The body of POST /uploads. */
export const uploadRequestSchema = builtOnFirstUse(() =>
  z.object({
    content_type: z.string().transform((value) => value.split(';')[0]!.trim().toLowerCase()),
    filename: z.string().max(1024).optional().nullable(),
    size: z.number().int().positive(),
  }),
);

/**
 * Open a direct upload (POST /uploads).
 * 1. 415 unless the declared type is a photo (JPEG, PNG, WEBP) or a ZIP archive; 413 when the declared
 *    size is over the limit of its kind (`maxPhotoBytes`, `maxArchiveBytes`: layers/core/limits/sources.ts).
 * 2. Record the upload, then answer a presigned PUT whose Content-Type and Content-Length are signed:
 *    storage refuses a PUT of another type or size.
 */
export async function createUpload(deps: UploadDeps, caller: Caller, body: unknown) {
  const parsed = uploadRequestSchema().safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BadRequestError(`${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  const { content_type: contentType, size, filename } = parsed.data;
  if (!(contentType in UPLOAD_CONTENT_TYPES)) {
    throw new UnsupportedMediaTypeError(
      `content_type must be one of ${Object.keys(UPLOAD_CONTENT_TYPES).join(', ')}`,
    );
  }
  const kind = UPLOAD_CONTENT_TYPES[contentType as UploadContentType];
  const max = kind === 'photo' ? deps.maxPhotoBytes : deps.maxArchiveBytes;
  if (size > max) {
    throw new PayloadTooLargeError(`A ${kind} upload is at most ${max} bytes; ${size} were declared`);
  }
  const now = deps.clock.now();
  const id = newUploadId();
  const upload: Upload = {
    id,
    ownerId: ownerIdOf(caller),
    kind,
    contentType,
    bytes: size,
    filename: cleanOriginalName(filename),
    key: uploadKey(id, contentType as UploadContentType),
    createdAt: now.toISOString(),
    urlExpiresAt: new Date(now.getTime() + UPLOAD_URL_SECONDS * 1000).toISOString(),
    expiresAt: addDays(now, UPLOAD_TTL_HOURS / 24).toISOString(),
  };
  await deps.uploads.insert(upload);
  const url = await deps.objects.presignPut(upload.key, { contentType, bytes: size }, UPLOAD_URL_SECONDS);
  return { upload, url };
}
