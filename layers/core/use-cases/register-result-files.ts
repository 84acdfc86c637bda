import { addDays } from '../files/asset-rules.ts';
import type { FileRecord } from '../files/files.ts';
import { resultPath } from '../jobs/envelope.ts';
import { RESULT_TTL_DAYS } from '../jobs/expiry.ts';
import type { Job } from '../jobs/job.ts';
import type { Clock, FileRepository } from '../ports.ts';

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
