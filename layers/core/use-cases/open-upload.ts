import {
  BadRequestError,
  ConflictError,
  GoneError,
  NotFoundError,
  UnsupportedMediaTypeError,
} from '../errors.ts';
import type { UploadedFile } from '../jobs/input.ts';
import { type Caller, mayAccess } from '../keys/caller.ts';
import type { Clock, ObjectStore, UploadRepository, UploadTargets } from '../ports.ts';
import { UPLOAD_ID, type Upload, type UploadKind } from '../uploads/upload.ts';

export interface OpenUploadDeps {
  uploads: UploadRepository;
  objects: ObjectStore & Pick<UploadTargets, 'sizeOf'>;
  clock: Clock;
}

/**
 * A completed upload of the caller, ready to be used as a source of `kind`.
 * @throws NotFoundError (404) unknown, or another owner's (never 403: ids cannot be probed).
 * @throws GoneError (410) past its `usable_until`.
 * @throws UnsupportedMediaTypeError (415) a ZIP where a photo is wanted, or the other way round.
 * @throws ConflictError (409) nothing was PUT to its URL yet.
 * @throws BadRequestError (400) what was stored is not the declared size.
 */
export async function openUpload(
  deps: OpenUploadDeps,
  caller: Caller,
  uploadId: string,
  kind: UploadKind,
): Promise<Upload> {
  const upload = UPLOAD_ID.test(uploadId) ? await deps.uploads.get(uploadId) : null;
  if (!upload || !mayAccess(caller, upload)) {
    throw new NotFoundError(`Upload ${uploadId} does not exist`);
  }
  if (Date.parse(upload.expiresAt) <= deps.clock.now().getTime()) {
    throw new GoneError(`Upload ${uploadId} expired at ${upload.expiresAt}`);
  }
  if (upload.kind !== kind) {
    throw new UnsupportedMediaTypeError(
      kind === 'photo'
        ? `Upload ${uploadId} is a ZIP archive; send it to POST /batches`
        : `Upload ${uploadId} is an image, not a ZIP archive`,
    );
  }
  const stored = await deps.objects.sizeOf(upload.key);
  if (stored === null) {
    throw new ConflictError(`Upload ${uploadId} has not been completed: PUT the file to its url first`);
  }
  if (stored !== upload.bytes) {
    throw new BadRequestError(`Upload ${uploadId} holds ${stored} bytes, but ${upload.bytes} were declared`);
  }
  return upload;
}

/** The bytes of a completed photo upload (at most the photo limit), for a job or an asset. */
export async function readUploadedPhoto(
  deps: OpenUploadDeps,
  caller: Caller,
  uploadId: string,
): Promise<UploadedFile> {
  const upload = await openUpload(deps, caller, uploadId, 'photo');
  return {
    bytes: await deps.objects.get(upload.key),
    filename: upload.filename,
    contentType: upload.contentType,
  };
}
