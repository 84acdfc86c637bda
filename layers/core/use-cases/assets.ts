import { BadRequestError } from '../errors.ts';
import type { Asset } from '../files/asset.ts';
import {
  ASSET_TTL_DAYS,
  addDays,
  assetFileRecord,
  cleanOriginalName,
  nameFromUrl,
  newAssetId,
  originalNameOr,
  storageName,
} from '../files/assets.ts';
import type { SourceSpec, UploadedFile } from '../jobs/input.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type {
  AssetRepository,
  Clock,
  FileRepository,
  ObjectStore,
  UploadRepository,
  UploadTargets,
} from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { type CheckedImage, checkImage } from './create-job.ts';
import { readUploadedPhoto } from './uploads.ts';

export interface CreateAssetDeps {
  assets: AssetRepository;
  files: FileRepository;
  objects: ObjectStore;
  clock: Clock;
  /** Download a source image from a caller-supplied URL, enforcing the outbound rules. */
  fetchSource(url: string): Promise<UploadedFile>;
  maxSourceBytes: number;
  /** `upload_id` sources; without them it is refused. */
  uploads?: UploadRepository;
  maxPhotoBytes?: number;
}

/**
 * Store an image for reuse as a job source (spec 2.5, POST /assets).
 * 1. Take the bytes from the upload or the URL; 413 when too large, 415 unless JPG, PNG or WEBP.
 * 2. Name it: the upload's file name, else the URL's last path segment, else `image.<ext>`.
 * 3. Store the bytes under `assets/<asset_id>/`, which the bucket keeps for 7 days.
 * 4. Record the asset and its File in one write; both expire 7 days after creation.
 */
export async function createAsset(deps: CreateAssetDeps, caller: Caller, source: SourceSpec): Promise<Asset> {
  if (source.kind === 'asset')
    throw new BadRequestError('Send the image as file, url or upload_id, not asset_id');
  let image: CheckedImage;
  if (source.kind === 'upload') {
    if (!deps.uploads) throw new BadRequestError('upload_id is not accepted here');
    const objects = deps.objects as ObjectStore & UploadTargets;
    const file = await readUploadedPhoto(
      { ...deps, uploads: deps.uploads, objects },
      caller,
      source.uploadId,
    );
    image = checkImage({ maxSourceBytes: deps.maxPhotoBytes ?? deps.maxSourceBytes }, file, 'upload_id');
  } else {
    image =
      source.kind === 'file'
        ? checkImage(deps, source.file, 'file')
        : checkImage(deps, await deps.fetchSource(source.url), 'url');
  }
  // The caller's URL, not a redirect target: that is the name they know the image by.
  const given = source.kind === 'url' ? nameFromUrl(source.url) : cleanOriginalName(image.file.filename);
  const originalName = originalNameOr(given, image.type);

  const now = deps.clock.now();
  const id = newAssetId();
  const asset: Asset = {
    id,
    ownerId: ownerIdOf(caller),
    fileId: await deps.files.nextId(),
    key: storageKeys.asset(id, storageName(originalName, image.type)),
    originalName,
    contentType: image.type,
    bytes: image.file.bytes.length,
    sha256: image.sha256,
    createdAt: now.toISOString(),
    expiresAt: addDays(now, ASSET_TTL_DAYS).toISOString(),
  };
  const file = assetFileRecord(asset);

  await deps.objects.put(asset.key, image.file.bytes, image.type);
  await deps.assets.insert(asset, file);
  return asset;
}
