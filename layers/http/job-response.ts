import { jobEnvelope } from '#core/jobs/envelope.ts';
import type { Job } from '#core/jobs/job.ts';
import type { AccountRepository, Clock } from '#core/ports.ts';
import { type HttpResult, json } from './responses.ts';

/** A job envelope response as of now, with the payer's current balance in its legacy `quota` field. */
export async function jobResponse(
  deps: { accounts: AccountRepository; clock: Clock },
  status: number,
  job: Job,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const account = job.account ? await deps.accounts.get(job.account) : null;
  return json(status, jobEnvelope(job, account, deps.clock.now()), headers);
}
