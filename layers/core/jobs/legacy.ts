import type { CreditAccount } from '../credits/credits.ts';
import { creditCosts, jobPath, quotaOf } from './envelope.ts';
import type { Job } from './job.ts';

/** Spec 2.3: the 202 answer of the legacy `/process` route. */
export function processCreatedResponse(job: Job, account: CreditAccount | null) {
  return {
    result: true,
    queued: true,
    code: 202,
    message: 'The job was queued',
    cost_credits: job.costCredits,
    job_id: job.id,
    status: job.status,
    status_url: jobPath(job.id),
    webhook_enabled: job.params.webhookUrl !== null,
    quota: { ...(quotaOf(account) ?? { remaining: null, credits_remaining: null }), ...creditCosts },
  };
}

/** Spec 2.3: the 202 answer of the legacy `/analyze` route; the analysis comes with the finished job. */
export function analyzeCreatedResponse(job: Job) {
  return {
    result: true,
    queued: true,
    code: 202,
    cost_credits: job.costCredits,
    job_id: job.id,
    status: job.status,
    status_url: jobPath(job.id),
  };
}
