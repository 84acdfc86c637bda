import { createHash } from 'node:crypto';
import type { Operation } from '../jobs/operations.ts';
import type { ObjectStore, OperationResult, OperationRunner } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';

const INFERENCE_CACHE_PREFIX = storageKeys.cachePrefix;

interface CacheEntry {
  /**
   * `key`: where the job that made the result stored the file (its results/). Absent in entries written
   * before the cache kept one copy only, whose files lie beside the entry.
   */
  files: Array<{
    name: string;
    roles: OperationResult['files'][number]['roles'];
    contentType: string;
    key?: string;
  }>;
  analysis?: Record<string, unknown>;
  modelVersion: Record<string, string>;
  plates?: OperationResult['plates'];
  plateHidden?: boolean;
  composition?: OperationResult['composition'];
  /** The tenant whose job made the result, as its marker's name: the first one needs no marker of its own. */
  madeFor?: string;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * The same bytes with the same parameters and the same model files give the same result, so a repeat
 * is served from storage and marked `inference_cached`. The key covers everything that shapes the output:
 * the source's hash, the operation, the parameters that affect pixels, a custom background's hash, and
 * the identity of every model file involved (`modelKey`), so new weights never serve stale results.
 *
 * One copy of a result is kept: the entry points at the files the first job stored under its results/
 * (both areas expire after the same days, and the entry is written only once those files are stored), so
 * a result that has expired or was deleted there is a miss.
 *
 * The work is shared between tenants, the flag is not: `inference_cached` is true only for a tenant who
 * has had this result before (a marker per tenant, named by a hash of its id), so no response tells one
 * tenant that another processed the same photo.
 */
export function cachedRunner(
  runner: OperationRunner,
  deps: { objects: ObjectStore; modelKey: (operation: Operation) => string },
): OperationRunner {
  return {
    async run(operation, input) {
      const { plateColor, plateSmoothing, plateMaskOnly, background } = input.params;
      const { format = null, maxWidth = null, framing = null, shadow = null, aspect = null } = input.params;
      const { requireExterior = null } = input.params;
      const key = sha256(
        JSON.stringify({
          operation,
          source: input.sourceSha256,
          params: {
            plateColor,
            plateSmoothing,
            plateMaskOnly,
            background,
            format,
            maxWidth,
            framing,
            shadow,
            aspect,
            requireExterior,
          },
          backgroundFile: input.background ? sha256(input.background) : null,
          models: deps.modelKey(operation),
        }),
      );
      const prefix = `${INFERENCE_CACHE_PREFIX}${key}/`;
      const tenant = input.tenant ? sha256(`tenant:${input.tenant}`) : null;
      const marker = tenant ? `${prefix}seen/${tenant}` : null;
      const hit = await read(deps.objects, prefix);
      if (hit) {
        const { madeFor, ...result } = hit;
        const seen = marker ? madeFor === tenant || (await deps.objects.exists(marker)) : false;
        if (marker && !seen) await deps.objects.put(marker, Buffer.alloc(0), 'application/octet-stream');
        return { ...result, inferenceCached: seen };
      }
      const result = await runner.run(operation, input);
      const { resultPrefix } = input;
      // Without a place where the caller keeps the files there is nothing to point at: not remembered.
      if (!resultPrefix) return result;
      return {
        ...result,
        async stored() {
          await result.stored?.();
          await write(deps.objects, prefix, resultPrefix, result, tenant);
        },
      };
    },
  };
}

/** A miss is asked, never read and caught: a missing key may be a refusal rather than a 404 (ports.ts). */
async function read(
  objects: ObjectStore,
  prefix: string,
): Promise<(OperationResult & Pick<CacheEntry, 'madeFor'>) | null> {
  const entryKey = `${prefix}entry.json`;
  if (!(await objects.exists(entryKey))) return null;
  const entry = JSON.parse((await objects.get(entryKey)).toString('utf8')) as CacheEntry;
  const stored = (file: CacheEntry['files'][number]) => file.key ?? `${prefix}${file.name}`;
  // A half-expired entry is a miss, not a failure.
  if (!(await Promise.all(entry.files.map((file) => objects.exists(stored(file))))).every(Boolean))
    return null;
  const files = await Promise.all(
    entry.files.map(async (file) => ({ ...file, bytes: await objects.get(stored(file)) })),
  );
  return { ...entry, files: files.map(({ key: _key, ...file }) => file), inferenceCached: true };
}

async function write(
  objects: ObjectStore,
  prefix: string,
  resultPrefix: string,
  result: OperationResult,
  madeFor: string | null,
): Promise<void> {
  const entry: CacheEntry = {
    files: result.files.map(({ name, roles, contentType }) => ({
      name,
      roles,
      contentType,
      key: `${resultPrefix}${name}`,
    })),
    ...(result.analysis ? { analysis: result.analysis } : {}),
    modelVersion: result.modelVersion,
    ...(result.plates ? { plates: result.plates } : {}),
    ...(result.plateHidden !== undefined ? { plateHidden: result.plateHidden } : {}),
    ...(result.composition ? { composition: result.composition } : {}),
    ...(madeFor ? { madeFor } : {}),
  };
  // Called once the files it names are stored: an entry is never visible before them.
  await objects.put(`${prefix}entry.json`, Buffer.from(JSON.stringify(entry)), 'application/json');
}
