import { correlate, logger } from '#aws/observability.ts';
import { validateIdempotencyKey } from '#core/idempotency/idempotency.ts';
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { parseJobRequest } from '#core/jobs/input.ts';
import { createJob } from '#core/use-cases/create-job.ts';
import { header } from '#http/body.ts';
import { jobCreatedResponse } from '#http/job-response.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract, JOB_ROUTES } from './schema.ts';

export const handler = apiHandler(contract, async ({ event, caller, body }) => {
  const key = event.routeKey.replace(` ${API_PREFIX}/`, ' /') as keyof typeof JOB_ROUTES;
  const { route, modes } = JOB_ROUTES[key] ?? JOB_ROUTES['POST /jobs'];
  const fields = route === 'analyze' ? { ...body.fields, mode: 'analyze' } : body.fields;
  const request = parseJobRequest(fields, body.files, modes);
  const idempotencyKey = validateIdempotencyKey(header(event, 'idempotency-key'));
  const created = await createJob(deps(), caller, request, { route, idempotencyKey });
  correlate({ jobId: created.job.id });
  if (!created.replayed) {
    // Powertools' metrics are imported here, not at init: a cold start whose first request is refused,
    // or replays a key, never loads them (docs/decisions/0058-what-a-zip-function-loads-at-init.md).
    const { recordJobCreated } = await import('#aws/metrics.ts');
    recordJobCreated(created.job);
    logger.info('job created', { operation: created.job.operation, route });
  }
  return jobCreatedResponse(route, created, deps().clock.now());
});
