import type { CreditAccount } from '../credits/credits.ts';
import { asShownAt, RESULT_TTL_DAYS, resultsExpireAt } from './expiry.ts';
import type { Background, Job, JobParams } from './job.ts';
import { OPERATION_REGISTRY, type Operation, PRICES } from './operations.ts';

export const API_PREFIX = '/api/v1';
/** A result path answers with a presigned storage link this short-lived: enough to follow it, not to share it. */
export const RESULT_LINK_SECONDS = 15 * 60;

export const jobPath = (jobId: string): string => `${API_PREFIX}/jobs/${jobId}`;
export const resultPath = (jobId: string, name: string): string => `${API_PREFIX}/results/${jobId}/${name}`;

export interface QuotaSnapshot {
  remaining: number;
  credits_remaining: number;
}

export const quotaOf = (account: CreditAccount | null): QuotaSnapshot | null =>
  account ? { remaining: account.available, credits_remaining: account.available } : null;

/** The Job resource of spec 2.2, as it is at `now`: past `expires_at` it links to no result file. */
export function jobResource(stored: Job, now: Date) {
  const job = asShownAt(stored, now);
  return {
    id: job.id,
    status: job.status,
    operation: job.operation,
    stage: job.stage,
    cancel_requested: job.cancelRequested,
    cost_credits: job.costCredits,
    attempts: job.attempts,
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    expires_at: resultsExpireAt(stored),
    output: job.output,
    error: job.error,
    links: {
      self: jobPath(job.id),
      cancel: `${jobPath(job.id)}/cancel`,
      retry: `${jobPath(job.id)}/retry`,
      ...(job.output?.url ? { result: job.output.url } : {}),
    },
  };
}

/** HTTP-like code of the legacy status fields: 200 done, 202 still going, the error's code otherwise. */
function legacyCode(job: Job): number {
  if (job.status === 'success') return 200;
  if (job.status === 'failed') return job.error?.code ?? 500;
  if (job.status === 'cancelled') return 409;
  return 202;
}

/**
 * The final job JSON of spec 2.3: what legacy polling clients and webhooks read. `result` is false
 * exactly when the job failed or was cancelled.
 */
function legacyJobFields(stored: Job, account: CreditAccount | null, now: Date) {
  const job = asShownAt(stored, now);
  const output = job.output;
  const quota = quotaOf(account);
  return {
    result: job.status !== 'failed' && job.status !== 'cancelled',
    job_id: job.id,
    status: job.status,
    code: legacyCode(job),
    ...(job.error
      ? { message: job.error.message }
      : job.status === 'cancelled'
        ? { message: 'Job was cancelled' }
        : {}),
    ...(output?.url ? { url: output.url } : {}),
    ...(output?.plate_mask_url ? { plate_mask_url: output.plate_mask_url } : {}),
    ...(output?.background_mask_url ? { background_mask_url: output.background_mask_url } : {}),
    ...(output?.mask_url ? { mask_url: output.mask_url } : {}),
    ...(output?.analysis ? { analysis: output.analysis } : {}),
    ...(job.status === 'success' && output?.output_kind !== 'analysis'
      ? { expires_in_days: RESULT_TTL_DAYS }
      : {}),
    mode: job.operation,
    background: effectiveBackground(job.operation, job.params),
    plate_color: job.params.plateColor,
    plate_smoothing: job.params.plateSmoothing,
    plate_mask_only: job.params.plateMaskOnly,
    ...(quota ? { quota } : {}),
  };
}

/**
 * The background a job or batch draws, as its responses name it: `custom` for a file, else the preset or
 * `transparent`; null for the operations that draw none.
 */
export function effectiveBackground(
  operation: Operation,
  params: Pick<JobParams, 'background' | 'backgroundFileKey'>,
): Background | 'custom' | null {
  if (!OPERATION_REGISTRY[operation].drawsBackground) return null;
  return params.backgroundFileKey ? 'custom' : params.background;
}

/** The job envelope: the Job resource and the legacy fields side by side, so both kinds of client read one body. */
export function jobEnvelope(job: Job, account: CreditAccount | null, now: Date) {
  return { ...legacyJobFields(job, account, now), ...jobResource(job, now) };
}

/**
 * The answer to a job POST /jobs accepted (202): the envelope plus `status_url`, which the spec's states
 * table promises on every creation route, as the legacy answers carry it.
 */
export function createdJobEnvelope(job: Job, account: CreditAccount | null, now: Date) {
  return { ...jobEnvelope(job, account, now), status_url: jobPath(job.id) };
}

export const creditCosts = { process_credit_cost: PRICES.edit, classification_credit_cost: PRICES.analysis };
