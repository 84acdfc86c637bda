import { createHash } from 'node:crypto';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import { openAsset } from '../files/asset-rules.ts';
import { sniffImageType } from '../images.ts';
import type { SourceSpec, UploadedFile } from '../jobs/input.ts';
import type { Caller } from '../keys/caller.ts';
import { imageProblem } from '../limits/image.ts';
import type { AssetRepository, Clock, ObjectStore, UploadRepository, UploadTargets } from '../ports.ts';
import { readUploadedPhoto } from './open-upload.ts';

export interface SourceImageDeps {
  objects: ObjectStore;
  clock: Clock;
  /** Download a source image from a caller-supplied URL, enforcing the outbound rules. */
  fetchSource(url: string): Promise<UploadedFile>;
  /** Largest image sent in the request or found at a URL. */
  maxSourceBytes: number;
  /** Where `asset_id` sources are looked up. */
  assets: AssetRepository;
  /** Where `upload_id` sources are looked up; without them `upload_id` is refused. */
  uploads?: UploadRepository;
  /** Largest photo by upload (defaults to `maxSourceBytes`). */
  maxPhotoBytes?: number;
}

/** An image the service takes, with what it is and its content hash. */
export interface CheckedImage {
  file: UploadedFile;
  type: NonNullable<ReturnType<typeof sniffImageType>>;
  sha256: string;
}

/**
 * Read the source image of a job or an asset (POST /jobs, /process, /analyze, /assets).
 * 1. Take its bytes: the request's `file`, a download of its `url`, or a copy of the caller's asset or
 *    completed upload (a copy, so that deleting or expiring either later cannot break the job).
 * 2. Check them as `checkImage` does, an upload under the photo limit of uploads.
 */
export async function readSourceImage(
  deps: SourceImageDeps,
  caller: Caller,
  source: SourceSpec,
): Promise<CheckedImage> {
  switch (source.kind) {
    case 'file':
      return checkImage(deps, source.file, 'file');
    case 'url':
      return checkImage(deps, await deps.fetchSource(source.url), 'url');
    case 'asset':
      return checkImage(deps, await openAsset(deps, caller, source.assetId), 'asset_id');
    case 'upload': {
      if (!deps.uploads) throw new BadRequestError('upload_id is not accepted here');
      const file = await readUploadedPhoto(
        { uploads: deps.uploads, objects: deps.objects as ObjectStore & UploadTargets, clock: deps.clock },
        caller,
        source.uploadId,
      );
      return checkImage({ maxSourceBytes: deps.maxPhotoBytes ?? deps.maxSourceBytes }, file, 'upload_id');
    }
  }
}

/**
 * Check that `file` (the request field `field`) is an image the service takes: 413 over `maxSourceBytes`,
 * 415 unless JPG, PNG or WEBP by its magic bytes, and the image limits read from its header.
 */
export function checkImage(
  deps: { maxSourceBytes: number },
  file: UploadedFile,
  field: string,
): CheckedImage {
  if (file.bytes.length > deps.maxSourceBytes) {
    throw new PayloadTooLargeError(`${field} is larger than ${deps.maxSourceBytes} bytes`);
  }
  const type = sniffImageType(file.bytes);
  if (!type) throw new UnsupportedMediaTypeError(`${field} is not a JPG, PNG or WEBP image`);
  const problem = imageProblem(file.bytes, field);
  if (problem) throw problem;
  return { file, type, sha256: sha256(file.bytes) };
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
