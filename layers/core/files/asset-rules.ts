import { GoneError, NotFoundError } from '../errors.ts';
import { extensionOf, type ImageType } from '../images.ts';
import { newJobId } from '../jobs/ids.ts';
import type { UploadedFile } from '../jobs/input.ts';
import { type Caller, mayAccess } from '../keys/caller.ts';
import type { AssetRepository, Clock, ObjectStore } from '../ports.ts';
import { STORAGE_PREFIXES } from '../storage-layout.ts';
import type { Asset } from './asset-record.ts';
import type { FileRecord } from './files.ts';

/** Assets live as long as the bucket keeps `assets/` (its lifecycle rule deletes them after 7 days). */
export const ASSET_TTL_DAYS = STORAGE_PREFIXES.assets.expireDays;
/** How long after expiry a record is kept, so a late reference answers 410 "expired" rather than 404. */
export const ASSET_REMEMBERED_DAYS = 7;

const DAY_MS = 24 * 3600 * 1000;
export const addDays = (from: Date, days: number): Date => new Date(from.getTime() + days * DAY_MS);

const ASSET_ID = /^ast_[0-9a-z]{24}$/;

/** The same 120-bit random token as job ids, so asset ids cannot be guessed either. */
export const newAssetId = (): string => `ast_${newJobId().slice('job_'.length)}`;

/** The Asset resource of spec 2.5. */
/** An asset as it appears among its owner's files (no public url: assets are read by `asset_id`). */
export const assetFileRecord = (asset: Asset): FileRecord => ({
  fileId: asset.fileId,
  ownerId: asset.ownerId,
  kind: 'asset',
  name: asset.originalName,
  contentType: asset.contentType,
  bytes: asset.bytes,
  key: asset.key,
  url: null,
  jobId: null,
  assetId: asset.id,
  createdAt: asset.createdAt,
  expiresAt: asset.expiresAt,
});

export const assetResource = (asset: Asset) => ({
  asset_id: asset.id,
  expires_at: asset.expiresAt,
  original_name: asset.originalName,
});

const isAssetExpired = (asset: Asset, now: Date): boolean => Date.parse(asset.expiresAt) <= now.getTime();

/** When the record may disappear for good (DynamoDB's `ttl`); until then an expired asset answers 410. */
export const assetForgottenAt = (asset: Asset): Date =>
  addDays(new Date(asset.expiresAt), ASSET_REMEMBERED_DAYS);

const MAX_ORIGINAL_NAME = 255;

/**
 * The name as the caller gave it, minus any directories (some clients send full paths) and control
 * characters; null when nothing is left.
 */
export function cleanOriginalName(raw: string | null | undefined): string | null {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what goes
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return cleaned ? cleaned.slice(0, MAX_ORIGINAL_NAME) : null;
}

/** The URL's last non-empty path segment, percent-decoded: what a caller would call the image. */
export function nameFromUrl(url: string): string | null {
  const segment = new URL(url).pathname.split('/').filter(Boolean).pop();
  if (!segment) return null;
  try {
    return cleanOriginalName(decodeURIComponent(segment));
  } catch {
    return cleanOriginalName(segment);
  }
}

/** `original_name` is always present (spec 2.5); an image that came without a name is called after its type. */
export const originalNameOr = (name: string | null, type: ImageType): string =>
  name ?? `image.${extensionOf(type)}`;

/**
 * A name that is safe as the last segment of a storage key: ASCII letters, digits, dot, dash and
 * underscore, no leading dot, at most 100 characters.
 */
export function storageName(name: string, type: ImageType): string {
  const safe = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_');
  // Nothing readable before the extension (a non-Latin name, say) names nothing: fall back to the type.
  const stem = safe.lastIndexOf('.') > 0 ? safe.slice(0, safe.lastIndexOf('.')) : safe;
  if (!/[A-Za-z0-9]/.test(stem)) return `image.${extensionOf(type)}`;
  return safe.replace(/^[._-]+/, '').slice(0, 100);
}

/**
 * Whether `caller` may use the asset now. Another owner's asset is 404 like an unknown one, and
 * that is decided before expiry, so ids cannot be probed. The master key may use any asset.
 */
export function usableAsset(asset: Asset | null, caller: Caller, assetId: string, now: Date): Asset {
  if (!asset || !mayAccess(caller, asset)) {
    throw new NotFoundError(`Asset ${assetId} does not exist`);
  }
  if (isAssetExpired(asset, now)) throw new GoneError(`Asset ${assetId} expired at ${asset.expiresAt}`);
  return asset;
}

/**
 * The bytes of an asset as a job source: 404 unknown or not the caller's, 410 expired. Bytes deleted
 * from storage while the record still existed (a file deletion in flight) count as unknown.
 */
export async function openAsset(
  deps: { assets: AssetRepository; objects: ObjectStore; clock: Clock },
  caller: Caller,
  assetId: string,
): Promise<UploadedFile> {
  const asset = usableAsset(
    ASSET_ID.test(assetId) ? await deps.assets.get(assetId) : null,
    caller,
    assetId,
    deps.clock.now(),
  );
  // Asked, not read and caught: a missing key may be a refusal rather than a 404 (ports.ts).
  if (!(await deps.objects.exists(asset.key))) throw new NotFoundError(`Asset ${assetId} does not exist`);
  const bytes = await deps.objects.get(asset.key);
  return { bytes, filename: asset.originalName, contentType: asset.contentType };
}
