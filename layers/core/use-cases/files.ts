import { NotFoundError } from '../errors.ts';
import { addDays } from '../files/assets.ts';
import { type FileRecord, type PageQuery, pageOf } from '../files/files.ts';
import { resultPath } from '../jobs/envelope.ts';
import { RESULT_TTL_DAYS } from '../jobs/expiry.ts';
import type { Job } from '../jobs/job.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { Clock, FileRepository, ObjectStore } from '../ports.ts';

/**
 * List files (GET /files).
 * 1. An ordinary key lists its own files; the master key lists everyone's (the legacy global listing).
 * 2. Read one row more than the page holds: it tells whether there is a next page.
 * 3. Return the page, newest first, and the cursor for `before` (null on the last page).
 */
export async function listFiles(
  deps: { files: FileRepository },
  caller: Caller,
  query: PageQuery,
): Promise<{ files: FileRecord[]; nextCursor: number | null }> {
  const owner = caller.kind === 'master' ? null : ownerIdOf(caller);
  const rows = await deps.files.list(owner, query.before, query.limit + 1);
  const { items, nextCursor } = pageOf(rows, query.limit);
  return { files: items, nextCursor };
}

/**
 * Delete a file (DELETE /files/{file_id}).
 * 1. Unknown, expired or another owner's file: 404 (the master key may delete any).
 * 2. Delete the stored bytes first: should the record's removal fail, a retry finds it and finishes.
 * 3. Remove the record; an asset's file takes the asset with it, so its id answers 404 from then on.
 */
export async function deleteFile(
  deps: { files: FileRepository; objects: ObjectStore },
  caller: Caller,
  fileId: number,
): Promise<void> {
  const file = await deps.files.get(fileId);
  if (!file || (caller.kind !== 'master' && file.ownerId !== ownerIdOf(caller))) {
    throw new NotFoundError(`File ${fileId} does not exist`);
  }
  await deps.objects.delete(file.key);
  if (!(await deps.files.delete(file))) throw new NotFoundError(`File ${fileId} does not exist`);
}

export interface ResultFile {
  name: string;
  /** Storage key, `results/<job_id>/<name>`. */
  key: string;
  contentType: string;
  bytes: number;
}

/**
 * List a finished job's result files among its owner's files; called by settlement.
 * 1. Only a job that ended in success has results (a cancellation can win over a successful run).
 * 2. Each file gets a new id, the job's result path as `url`, and expires with the results
 *    (30 days after the job finished).
 * 3. A name the job already registered is skipped, so a repeated settlement adds nothing, and a file
 *    the owner deleted meanwhile stays deleted.
 * @returns the files registered by this call.
 */
export async function registerResultFiles(
  deps: { files: FileRepository; clock: Clock },
  job: Job,
  files: ResultFile[],
): Promise<FileRecord[]> {
  if (job.status !== 'success') return [];
  const finished = job.finishedAt ? new Date(job.finishedAt) : deps.clock.now();
  const registered: FileRecord[] = [];
  for (const file of files) {
    const record: FileRecord = {
      fileId: await deps.files.nextId(),
      ownerId: job.ownerId,
      kind: 'result',
      name: file.name,
      contentType: file.contentType,
      bytes: file.bytes,
      key: file.key,
      url: resultPath(job.id, file.name),
      jobId: job.id,
      assetId: null,
      createdAt: finished.toISOString(),
      expiresAt: addDays(finished, RESULT_TTL_DAYS).toISOString(),
    };
    if (await deps.files.insertResult(record)) registered.push(record);
  }
  return registered;
}
