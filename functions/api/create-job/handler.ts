import middy from '@middy/core';
import { correlate, httpCorrelation, logger, observability, recordJobCreated } from '#aws/observability.ts';
import { validateIdempotencyKey } from '#core/idempotency/idempotency.ts';
import { API_PREFIX, createdJobEnvelope, jobPath } from '#core/jobs/envelope.ts';
import { LEGACY_PROCESS_MODES, parseJobRequest } from '#core/jobs/input.ts';
import type { JobRoute, Operation } from '#core/jobs/job.ts';
import { analyzeCreatedResponse, processCreatedResponse } from '#core/jobs/legacy.ts';
import { createJob } from '#core/use-cases/create-job.ts';
import { header } from '#http/body.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { jobResponse } from '#http/job-response.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/**
 * One handler serves POST /jobs and the legacy /process and /analyze (its contract's routes, so a route
 * added there without a line here does not compile), which differ in modes and answers.
 */
const ROUTES: Record<keyof typeof contract.operations, { route: JobRoute; modes?: readonly Operation[] }> = {
  'POST /jobs': { route: 'jobs' },
  'POST /process': { route: 'process', modes: LEGACY_PROCESS_MODES },
  'POST /analyze': { route: 'analyze', modes: ['analyze'] },
};

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, opensGuestSession: true, deps }))
  .handler(async (event, context) => {
    const key = event.routeKey.replace(` ${API_PREFIX}/`, ' /') as keyof typeof ROUTES;
    const { route, modes } = ROUTES[key] ?? ROUTES['POST /jobs'];
    const { fields, files } = context.body;
    const request = parseJobRequest(
      route === 'analyze' ? { ...fields, mode: 'analyze' } : fields,
      files,
      modes,
    );
    const idempotencyKey = validateIdempotencyKey(header(event, 'idempotency-key'));
    const { status, job } = await createJob(deps(), context.caller, request, { route, idempotencyKey });
    correlate({ jobId: job.id });
    if (status === 202) {
      recordJobCreated(job);
      logger.info('job created', { operation: job.operation, route });
    }
    const account = job.account ? await deps().accounts.get(job.account) : null;
    const location = { location: jobPath(job.id) };
    // A replay (200) returns the job as polling would; a fresh legacy job gets its route's creation answer.
    if (status === 202 && route === 'process')
      return json(202, processCreatedResponse(job, account), location);
    if (status === 202 && route === 'analyze') return json(202, analyzeCreatedResponse(job), location);
    if (status === 202) return json(202, createdJobEnvelope(job, account, deps().clock.now()), location);
    return jobResponse(deps(), status, job, location);
  });
