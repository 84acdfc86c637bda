import { BadRequestError } from '../errors.ts';
import type { Asset } from '../files/asset-record.ts';
import {
  ASSET_TTL_DAYS,
  addDays,
  assetFileRecord,
  cleanOriginalName,
  nameFromUrl,
  newAssetId,
  originalNameOr,
  storageName,
} from '../files/asset-rules.ts';
import type { SourceSpec } from '../jobs/input.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { FileRepository } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { readSourceImage, type SourceImageDeps } from './source-image.ts';

export interface CreateAssetDeps extends SourceImageDeps {
  files: FileRepository;
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
  const image = await readSourceImage(deps, caller, source);
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
