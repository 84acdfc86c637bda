import middy from '@middy/core';
import { deps } from '#aws/wiring.ts';
import { validateIdempotencyKey } from '#core/idempotency/idempotency.ts';
import { jobEnvelope } from '#core/jobs/envelope.ts';
import { parseJobRequest } from '#core/jobs/input.ts';
import type { JobRoute } from '#core/jobs/job.ts';
import { createJob } from '#core/use-cases/create-job.ts';
import { header, parseBody } from '#http/body.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';

/** One handler serves POST /jobs and the legacy /process and /analyze, which differ only in allowed modes. */
const ROUTES: Record<
  string,
  { route: JobRoute; modes?: readonly ('plate' | 'studio_background' | 'analyze')[] }
> = {
  'POST /api/v1/jobs': { route: 'jobs' },
  'POST /api/v1/process': { route: 'process', modes: ['plate', 'studio_background'] },
  'POST /api/v1/analyze': { route: 'analyze', modes: ['analyze'] },
};

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(httpStack({ auth: 'required', authenticator: () => deps().authenticate }))
  .handler(async (event, context) => {
    const d = deps();
    const { route, modes } = ROUTES[event.routeKey] ?? ROUTES['POST /api/v1/jobs']!;
    const body = await parseBody(event, d.maxSourceBytes);
    const fields = route === 'analyze' ? { ...body.fields, mode: 'analyze' } : body.fields;
    const request = parseJobRequest(fields, body.files, modes);
    const idempotencyKey = validateIdempotencyKey(header(event, 'idempotency-key'));
    const { status, job } = await createJob(d, context.caller, request, { route, idempotencyKey });
    const account = job.account ? await d.accounts.get(job.account) : null;
    return json(status, jobEnvelope(job, account), { location: `/api/v1/jobs/${job.id}` });
  });
