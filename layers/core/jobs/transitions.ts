import { ConflictError } from '../errors.ts';
import type { Job, JobError, JobOutput, JobStatus } from './job.ts';

/**
 * The job state machine as data: which statuses each move starts from.
 * Settlement is the only way out of `processing`, so credits and status always move together.
 */
const MOVES = {
  start: ['queued'],
  succeed: ['processing'],
  fail: ['queued', 'processing'],
  cancel: ['queued', 'processing', 'cancelled'],
  retry: ['failed'],
} as const satisfies Record<string, readonly JobStatus[]>;

type Move = keyof typeof MOVES;

function canMove(status: JobStatus, move: Move): boolean {
  return (MOVES[move] as readonly JobStatus[]).includes(status);
}

function assertMove(job: Job, move: Move): void {
  if (!canMove(job.status, move)) {
    throw new ConflictError(`Job ${job.id} is ${job.status}; it cannot ${move}`);
  }
}

export function startJob(job: Job, now: string): Job {
  assertMove(job, 'start');
  return { ...job, status: 'processing', stage: 'preparing', attempts: job.attempts + 1, startedAt: now };
}

export function succeedJob(job: Job, output: JobOutput, now: string): Job {
  assertMove(job, 'succeed');
  return {
    ...job,
    status: 'success',
    stage: 'done',
    output,
    error: null,
    chargedCredits: job.reservedCredits,
    finishedAt: now,
  };
}

export function failJob(job: Job, error: JobError, now: string): Job {
  assertMove(job, 'fail');
  return { ...job, status: 'failed', stage: 'done', output: null, error, chargedCredits: 0, finishedAt: now };
}

/**
 * A queued job is cancelled at once; a processing one is only flagged, and the workflow
 * finishes the cancellation at its next step boundary. Cancelling twice is harmless.
 */
export function cancelJob(job: Job, now: string): { job: Job; immediate: boolean } {
  if (job.status === 'success' || job.status === 'failed') {
    throw new ConflictError(
      `Job ${job.id} already finished with status ${job.status}; it cannot be cancelled`,
    );
  }
  assertMove(job, 'cancel');
  if (job.status === 'processing') return { job: { ...job, cancelRequested: true }, immediate: false };
  if (job.status === 'cancelled') return { job, immediate: true };
  return { job: finishCancelled(job, now), immediate: true };
}

/** Complete a cancellation: nothing is charged, whatever the job had produced. */
export function finishCancelled(job: Job, now: string): Job {
  assertMove(job, 'cancel');
  return {
    ...job,
    status: 'cancelled',
    stage: 'done',
    cancelRequested: true,
    output: null,
    chargedCredits: 0,
    finishedAt: job.status === 'cancelled' ? job.finishedAt : now,
  };
}

/** A failed job queued again, as a fresh attempt with nothing of the failed one left on it. */
export function retryJob(job: Job): Job {
  assertMove(job, 'retry');
  return {
    ...job,
    status: 'queued',
    stage: 'queued',
    cancelRequested: false,
    chargedCredits: 0,
    startedAt: null,
    finishedAt: null,
    output: null,
    error: null,
    retries: job.retries + 1,
    // The owner moved on to a new attempt, whose own run delivers its end.
    followUpDue: undefined,
  };
}
