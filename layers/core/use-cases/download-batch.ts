import { type ZipSource, zipStream } from '../archive/zip-writer.ts';
import { isFinished } from '../batches/batch.ts';
import { type ArchivedOutput, archivedOutputs, MANIFEST_NAME, manifestOf } from '../batches/manifest.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { Caller } from '../keys/caller.ts';
import type { BatchRepository, Clock, ObjectStore, ObjectStreams } from '../ports.ts';
import { getOwnBatch } from './control-batch.ts';

export interface DownloadDeps {
  batches: BatchRepository;
  objects: ObjectStore & ObjectStreams;
  clock: Clock;
}

/** The link to the archive is as short-lived as a result link. */
export const DOWNLOAD_LINK_SECONDS = 15 * 60;

/**
 * The results of a batch as one ZIP (GET /batches/{batch_id}/download).
 * 1. 404 for an unknown batch or another owner's. 409 while it is processing or paused unless
 *    `partial` is asked for, and 409 while no item has succeeded.
 * 2. The archive of this state of the batch (`download-<revision>.zip`) is built once: the results are
 *    streamed from storage one at a time through the ZIP writer into a multipart upload, with
 *    `manifest.json` last, so neither the archive nor a whole result is ever held in memory.
 * 3. Answer a 15-minute link to it: API Gateway and Lambda cannot return large bodies themselves.
 */
export async function downloadBatch(
  deps: DownloadDeps,
  caller: Caller,
  batchId: string,
  options: { partial: boolean },
): Promise<{ url: string; key: string }> {
  const batch = await getOwnBatch(deps, caller, batchId);
  if (!isFinished(batch) && !options.partial) {
    throw new ConflictError(
      `Batch ${batchId} is ${batch.status}; ask for ?partial=true to download the results ready so far`,
    );
  }
  if (batch.succeeded === 0)
    throw new ConflictError(`Batch ${batchId} has no result yet: no item has succeeded`);
  const key = `batches/${batch.id}/download-${batch.revision}.zip`;
  if (!(await deps.objects.exists(key))) {
    const items = await deps.batches.items(batchId);
    const planned = archivedOutputs(batch, items);
    const archived: ArchivedOutput[] = [];
    const generatedAt = deps.clock.now().toISOString();
    async function* entries(): AsyncGenerator<ZipSource> {
      // The next few results are requested while one is copied: their bodies wait, unread and bounded
      // by the connection's flow control, so the archive is still written one result at a time.
      const opening: Array<Promise<Opened>> = [];
      let next = 0;
      try {
        for (const output of planned) {
          while (opening.length < LOOKAHEAD && next < planned.length)
            opening.push(open(deps, planned[next++]!.key));
          const opened = await opening.shift()!;
          if ('error' in opened) throw opened.error;
          if (!opened.data) continue; // deleted by its owner or expired: the manifest says so
          archived.push(output);
          yield { name: output.name, data: opened.data, compress: false };
        }
      } finally {
        for (const pending of opening) void pending.then(discard);
      }
      const manifest = manifestOf(batch, items, archived, generatedAt);
      yield {
        name: MANIFEST_NAME,
        data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
        compress: true,
      };
    }
    await deps.objects.putStream(key, zipStream(entries()), {
      contentType: 'application/zip',
      contentDisposition: `attachment; filename="${batch.id}.zip"`,
    });
  }
  return { url: await deps.objects.presignGet(key, DOWNLOAD_LINK_SECONDS), key };
}

/** Results requested ahead of the one being copied. */
const LOOKAHEAD = 4;

type Opened = { data: AsyncIterable<Uint8Array> | null } | { error: unknown };

/** Never rejects, so a request made ahead cannot become an unhandled rejection. */
const open = (deps: DownloadDeps, key: string): Promise<Opened> =>
  deps.objects.getStream(key).then(
    (data) => ({ data }),
    (error: unknown) => (error instanceof NotFoundError ? { data: null } : { error }),
  );

/** A body requested ahead but never read is closed, so its connection goes back to the pool. */
function discard(opened: Opened): void {
  const body = 'data' in opened ? (opened.data as { destroy?: () => void } | null) : null;
  body?.destroy?.();
}
