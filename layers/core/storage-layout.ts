/**
 * Every place the service keeps bytes in its bucket, and how long the bucket keeps them. The CDK app turns
 * `STORAGE_PREFIXES` into the bucket's lifecycle rules and IAM scopes (lib/config.ts); the code builds every
 * key with `storageKeys`. One module, so that a prefix and its lifetime cannot drift apart.
 */
export const STORAGE_PREFIXES = {
  /** A job's source photo and custom background, read once by the inference step. */
  sources: { prefix: 'sources/', expireDays: 7 },
  /** Result images and masks, linked from jobs (`expires_in_days`). */
  results: { prefix: 'results/', expireDays: 30 },
  /** Reusable source images (POST /assets). */
  assets: { prefix: 'assets/', expireDays: 7 },
  /** A batch's archive, its extracted photos and its download archives (docs/decisions/0034-batch-archives.md). */
  batches: { prefix: 'batches/', expireDays: 30 },
  /** Results kept by content hash so a repeated photo is not inferred again (`inference_cached`). */
  cache: { prefix: 'cache/', expireDays: 30 },
  /** Direct uploads (POST /uploads): usable for 24 hours, so two days is plenty. */
  uploads: { prefix: 'uploads/', expireDays: 2 },
  /** Backgrounds stored on API keys (spec 2.1): kept as long as the key, so no expiry rule. */
  keys: { prefix: 'keys/', expireDays: null },
} as const;

export type StorageArea = keyof typeof STORAGE_PREFIXES;

const { sources, results, assets, batches, cache, uploads, keys } = STORAGE_PREFIXES;

const batchItems = (batchId: string) => `${batches.prefix}${batchId}/items/`;

/** The key of every object the service writes. */
export const storageKeys = {
  source: (jobId: string, extension: string) => `${sources.prefix}${jobId}/source.${extension}`,
  jobBackground: (jobId: string, extension: string) => `${sources.prefix}${jobId}/background.${extension}`,
  resultPrefix: (jobId: string) => `${results.prefix}${jobId}/`,
  result: (jobId: string, name: string) => `${results.prefix}${jobId}/${name}`,
  asset: (assetId: string, fileName: string) => `${assets.prefix}${assetId}/${fileName}`,
  batchArchive: (batchId: string) => `${batches.prefix}${batchId}/archive.zip`,
  /** Where a batch's extracted photos are: one folder per item. */
  batchItems,
  batchItem: (batchId: string, index: number, fileName: string) =>
    `${batchItems(batchId)}${index}/${fileName}`,
  /** Beside the items' photos: the inference step reads both there (item folders are numbers). */
  batchBackground: (batchId: string, extension: string) => `${batchItems(batchId)}background.${extension}`,
  batchDownload: (batchId: string, revision: number) =>
    `${batches.prefix}${batchId}/download-${revision}.zip`,
  keyBackground: (keyId: string, extension: string) => `${keys.prefix}${keyId}/background.${extension}`,
  upload: (uploadId: string, extension: string) => `${uploads.prefix}${uploadId}/upload.${extension}`,
  cachePrefix: cache.prefix,
} as const;

/**
 * The table's secondary indexes, read by the CDK app for the table and its IAM scopes and by the adapters
 * for their queries. `active` is sparse: only a job or batch not yet at its end carries its keys, spread
 * over `shards` partitions so that a busy hour of job writes is not one hot index partition.
 */
export const TABLE_INDEXES = {
  gsi1: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  active: { name: 'active', partitionKey: 'active_pk', sortKey: 'active_sk', shards: 8 },
} as const;
