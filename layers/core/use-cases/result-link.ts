import { GoneError, NotFoundError } from '../errors.ts';
import { RESULT_TTL_DAYS, resultNames, resultsExpireAt } from '../jobs/expiry.ts';
import { JOB_ID_PATTERN, RESULT_NAME_PATTERN } from '../jobs/ids.ts';
import type { Clock, FileRepository, JobRepository, ObjectStore } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';

export interface ResultLinkDeps {
  jobs: Pick<JobRepository, 'get'>;
  objects: Pick<ObjectStore, 'presignGet' | 'exists'>;
  files: Pick<FileRepository, 'resultState'>;
  clock: Clock;
}

/** The one answer to a result path that names nothing, whatever is wrong with it: it tells a guesser nothing. */
export const NO_SUCH_RESULT = 'No such result';

/**
 * Where a result file can be downloaded (GET /results/{job_id}/{name}; no key: the job id is the capability).
 * 0. A job id or a name the service never issues: 404, before any read.
 * 1. A job that does not exist or did not succeed, or a name its output does not link to: 404.
 * 2. From the job's `expires_at` on: 410, whether or not the bucket has removed the file yet.
 * 3. A file no longer stored (its owner deleted it, DELETE /files): 410. Its file record tells, a table read
 *    (two table reads cost a twentieth of a storage listing); storage is asked only for a job whose results were
 *    never registered as files.
 * 4. Otherwise a presigned link to the file, valid `lifetimeSeconds`.
 */
export async function resultLink(
  deps: ResultLinkDeps,
  jobId: string,
  name: string,
  lifetimeSeconds: number,
): Promise<string> {
  if (!JOB_ID_PATTERN.test(jobId) || !RESULT_NAME_PATTERN.test(name)) throw new NotFoundError(NO_SUCH_RESULT);
  const job = await deps.jobs.get(jobId);
  if (job?.status !== 'success' || !resultNames(job).includes(name)) throw new NotFoundError(NO_SUCH_RESULT);
  const expiresAt = resultsExpireAt(job);
  if (expiresAt && Date.parse(expiresAt) <= deps.clock.now().getTime()) {
    throw new GoneError(
      `This result expired at ${expiresAt} and is deleted: results are kept ${RESULT_TTL_DAYS} days after the job finished`,
    );
  }
  const key = storageKeys.result(jobId, name);
  const state = await deps.files.resultState(jobId, name);
  if (state === 'deleted' || (state === null && !(await deps.objects.exists(key))))
    throw new GoneError('This result is no longer stored');
  return deps.objects.presignGet(key, lifetimeSeconds);
}
