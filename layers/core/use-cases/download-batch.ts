import { type Batch, isFinished } from '../batches/batch.ts';
import { type ArchivedOutput, archivedOutputs, MANIFEST_NAME, manifestOf } from '../batches/manifest.ts';
import { ConflictError, DownloadFailedError, NotFoundError } from '../errors.ts';
import type { Caller } from '../keys/caller.ts';
import type {
  ArchiveWorkflow,
  ArchiveWriter,
  BatchRepository,
  Clock,
  ObjectStore,
  ObjectStreams,
  ZipSource,
} from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { getOwnBatch } from './control-batch.ts';

interface DownloadDeps {
  batches: BatchRepository;
  objects: ObjectStore & ObjectStreams;
  clock: Clock;
}

export interface RequestDownloadDeps extends DownloadDeps {
  archiveWorkflow: ArchiveWorkflow;
}

export interface BuildDownloadDeps extends DownloadDeps {
  zip: ArchiveWriter;
}

/** The link to the archive is as short-lived as a result link. */
export const DOWNLOAD_LINK_SECONDS = 15 * 60;
/** What a client is told to wait before asking again while the archive is being built. */
const DOWNLOAD_RETRY_AFTER_SECONDS = 2;
/**
 * A failed build is tried again by a new execution after this long: executions are named by batch,
 * revision and this window, so that asking again at once cannot start a second build of the same state.
 */
const BUILD_WINDOW_MS = 5 * 60_000;

const downloadKey = (batch: Batch): string => storageKeys.batchDownload(batch.id, batch.revision);

export type DownloadAnswer =
  | { ready: true; url: string; key: string }
  | { ready: false; retryAfterSeconds: number };

/**
 * The results of a batch as one ZIP (GET /batches/{batch_id}/download).
 * 1. 404 for an unknown batch or another owner's. 409 while it is processing or paused unless
 *    `partial` is asked for, and 409 while no item has succeeded.
 * 2. The archive of this state of the batch (`download-<revision>.zip`) exists: answer a 15-minute link
 *    to it (API Gateway and Lambda cannot return large bodies themselves).
 * 3. Otherwise start the archive workflow's build of it (once per state: the execution is named by the
 *    batch's revision) and answer "not ready, ask again shortly"; a build that failed is a 500.
 */
export async function downloadBatch(
  deps: RequestDownloadDeps,
  caller: Caller,
  batchId: string,
  options: { partial: boolean },
): Promise<DownloadAnswer> {
  const batch = await getOwnBatch(deps, caller, batchId);
  if (batch.status === 'unpacking' || (!isFinished(batch) && !options.partial)) {
    throw new ConflictError(
      `Batch ${batchId} is ${batch.status}; ask for ?partial=true to download the results ready so far`,
    );
  }
  if (batch.succeeded === 0)
    throw new ConflictError(`Batch ${batchId} has no result yet: no item has succeeded`);
  const key = downloadKey(batch);
  if (await deps.objects.exists(key)) {
    return {
      ready: true,
      url: await deps.objects.presignGet(key, DOWNLOAD_LINK_SECONDS, { downloadName: downloadName(batch) }),
      key,
    };
  }
  const window = Math.floor(deps.clock.now().getTime() / BUILD_WINDOW_MS);
  const state = await deps.archiveWorkflow.start(`download-${batch.id}-${batch.revision}-${window}`, {
    task: 'download',
    batchId: batch.id,
  });
  if (state === 'failed')
    throw new DownloadFailedError(
      `The archive of batch ${batchId} could not be built; ask again in a few minutes`,
    );
  if (state === 'succeeded' && (await deps.objects.exists(key))) {
    return {
      ready: true,
      url: await deps.objects.presignGet(key, DOWNLOAD_LINK_SECONDS, { downloadName: downloadName(batch) }),
      key,
    };
  }
  return { ready: false, retryAfterSeconds: DOWNLOAD_RETRY_AFTER_SECONDS };
}

/**
 * Build the download of a batch's current state (a step of the archive workflow).
 * 1. Nothing to do when the archive of this state exists already.
 * 2. The results are streamed from storage one at a time through the ZIP writer into a multipart
 *    upload, with `manifest.json` last, so neither the archive nor a whole result is ever held in memory.
 */
export async function buildDownload(
  deps: BuildDownloadDeps,
  batchId: string,
): Promise<{ key: string } | null> {
  const batch = await deps.batches.get(batchId);
  if (!batch || batch.succeeded === 0) return null;
  const key = downloadKey(batch);
  if (await deps.objects.exists(key)) return { key };
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
    const manifest = manifestOf(batch!, items, archived, generatedAt);
    yield {
      name: MANIFEST_NAME,
      data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
      compress: true,
    };
  }
  await deps.objects.putStream(key, deps.zip.zip(entries()), {
    contentType: 'application/zip',
    contentDisposition: `attachment; filename="${batch.id}.zip"`,
  });
  return { key };
}

/** Results requested ahead of the one being copied. */
const LOOKAHEAD = 4;

type Opened = { data: AsyncIterable<Uint8Array> | null } | { error: unknown };

/**
 * Never rejects, so a request made ahead cannot become an unhandled rejection. A result is asked for
 * before it is read: a missing key may be a refusal rather than a 404 (ports.ts).
 */
const open = (deps: DownloadDeps, key: string): Promise<Opened> =>
  deps.objects
    .exists(key)
    .then((stored) => (stored ? deps.objects.getStream(key) : null))
    .then(
      (data) => ({ data }),
      (error: unknown) => (error instanceof NotFoundError ? { data: null } : { error }),
    );

/** A body requested ahead but never read is closed, so its connection goes back to the pool. */
function discard(opened: Opened): void {
  const body = 'data' in opened ? (opened.data as { destroy?: () => void } | null) : null;
  body?.destroy?.();
}

/**
 * What a browser saves the download as: the archive's own name with `-results` (`three-cars-results.zip`),
 * not the storage key's batch id. Only characters safe in a quoted header value and any file system.
 */
export function downloadName(batch: Pick<Batch, 'id' | 'archive'>): string {
  const base = (batch.archive.name ?? '')
    .replace(/\.zip$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 100);
  return `${base || batch.id}-results.zip`;
}
