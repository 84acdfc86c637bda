import { createdJobEnvelope, jobEnvelope, jobPath } from '#core/jobs/envelope.ts';
import type { Job, JobRoute } from '#core/jobs/job.ts';
import { analyzeCreatedResponse, processCreatedResponse } from '#core/jobs/legacy.ts';
import type { AccountRepository, Clock } from '#core/ports.ts';
import type { CreateJobResult } from '#core/use-cases/create-job.ts';
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

/**
 * The answer to job creation: a replay of a finished job (200) as polling answers it; a job accepted (202)
 * its route's creation answer (the legacy routes have their own).
 */
export function jobCreatedResponse(route: JobRoute, created: CreateJobResult, now: Date): HttpResult {
  const { status, job, account } = created;
  const location = { location: jobPath(job.id) };
  if (status === 200) return json(200, jobEnvelope(job, account, now), location);
  if (route === 'process') return json(202, processCreatedResponse(job, account), location);
  if (route === 'analyze') return json(202, analyzeCreatedResponse(job), location);
  return json(202, createdJobEnvelope(job, account, now), location);
}
