import { ConflictError, GoneError, isAwsDenial, PermissionDeniedError, TransientError } from '../errors.ts';
import { expiredInput } from '../jobs/expiry.ts';
import type { Job } from '../jobs/job.ts';
import { cancelJob, failJob, retryJob } from '../jobs/transitions.ts';
import type { Caller } from '../keys/caller.ts';
import type { Clock, JobRepository, ObjectStore, WorkflowStarter } from '../ports.ts';
import { getOwnJob } from './get-job.ts';
import { settlementOf, updateJob } from './update-job.ts';

export interface ControlDeps {
  jobs: JobRepository;
  workflow: WorkflowStarter;
  clock: Clock;
}

export interface RetryDeps extends ControlDeps {
  objects: Pick<ObjectStore, 'exists'>;
}

/**
 * Cancel a job (spec section 3).
 * 1. A queued job becomes cancelled at once and its reservation is released: 200.
 * 2. A cancelled job stays cancelled: 200.
 * 3. A processing job is flagged; the workflow finishes the cancellation at its next step: 202.
 * 4. A job that already succeeded or failed cannot be cancelled: 409.
 */
export async function cancelOwnJob(deps: ControlDeps, caller: Caller, jobId: string) {
  await getOwnJob(deps, caller, jobId);
  let immediate = true;
  const job = await updateJob(deps, jobId, (current) => {
    const outcome = cancelJob(current, deps.clock.now().toISOString());
    immediate = outcome.immediate;
    const alreadyFlagged = current.status === 'processing' && current.cancelRequested;
    if (outcome.job === current || alreadyFlagged) return null;
    return {
      after: outcome.job,
      movement: current.status === 'queued' ? settlementOf(current, 'release') : null,
    };
  });
  return { status: immediate ? (200 as const) : (202 as const), job };
}

/**
 * Retry a failed job.
 * 0. A job whose source photo or background file is gone (past its area's lifecycle days since the job was
 *    created, or no longer stored) cannot run again: 410, before anything is reserved or started.
 * 1. A failed job is queued again with a new reservation (402 when the balance is short) and a new
 *    workflow execution: 202.
 * 2. A job that is already running again because of an earlier retry is returned as it is: 200, so a
 *    client may repeat the call safely.
 * 3. Anything else cannot be retried: 409, and neither can the job of a batch item (spec 3: retry is for
 *    standalone jobs; the batch's retry makes its item a new job with its own reservation).
 */
export async function retryOwnJob(deps: RetryDeps, caller: Caller, jobId: string) {
  const current = await getOwnJob(deps, caller, jobId);
  if ((current.status === 'queued' || current.status === 'processing') && current.retries > 0) {
    return { status: 200 as const, job: current };
  }
  if (current.status !== 'failed') {
    throw new ConflictError(`Job ${jobId} is ${current.status}; only a failed job can be retried`);
  }
  if (current.batch) {
    throw new ConflictError(`Job ${jobId} belongs to batch ${current.batch.id}; retry the batch instead`);
  }
  await refuseExpiredInput(deps, current);
  const job = await updateJob(deps, jobId, (latest) => {
    if (latest.status !== 'failed') return null;
    const reservation =
      latest.account && latest.reservedCredits > 0
        ? {
            account: latest.account,
            amount: latest.reservedCredits,
            kind: 'reserve' as const,
            jobId: latest.id,
            jobVersion: latest.version + 1,
          }
        : null;
    return { after: retryJob(latest), movement: reservation };
  });
  if (job.status !== 'queued' || job.retries !== current.retries + 1) {
    // Someone else retried it in the meantime; theirs is the execution that counts.
    return { status: 200 as const, job };
  }
  await startOrFail(deps, job, job.retries + 1);
  return { status: 202 as const, job };
}

async function refuseExpiredInput(deps: RetryDeps, job: Job): Promise<void> {
  const expired = expiredInput(job, deps.clock.now());
  if (expired) {
    throw new GoneError(
      `The photos of job ${job.id} expired at ${expired.goneFrom} and are deleted, so it cannot be retried; ` +
        'create a new job. Nothing was charged',
    );
  }
  // Kept by the timestamps, yet gone: deleted by hand, or a lifecycle rule shorter than the code's.
  for (const key of [job.source.key, job.params.backgroundFileKey]) {
    if (key && !(await deps.objects.exists(key)))
      throw new GoneError(
        `The photos of job ${job.id} are no longer stored, so it cannot be retried; create a new job. ` +
          'Nothing was charged',
      );
  }
}

/** Start a job's workflow; if that is impossible, fail the job and release its credits so nothing hangs. */
export async function startOrFail(deps: ControlDeps, job: Job, attempt: number): Promise<void> {
  try {
    await deps.workflow.start(job.id, attempt);
  } catch (cause) {
    await updateJob(deps, job.id, (latest) =>
      latest.status === 'queued'
        ? {
            after: failJob(
              latest,
              { code: 500, message: 'The job could not be started' },
              deps.clock.now().toISOString(),
            ),
            movement: settlementOf(latest, 'release'),
          }
        : null,
    );
    // A denied start is the deployment's fault and stays so: a 503 would invite the client to retry it.
    if (isAwsDenial(cause))
      throw new PermissionDeniedError(
        "The processing workflow may not be started (a deployment fault; its operator's logs name it); no credits were charged",
        { cause },
      );
    throw new TransientError(
      'The processing workflow could not be started; no credits were charged. Repeat the request ' +
        '(under the same Idempotency-Key, the same job starts again)',
      { cause },
    );
  }
}
