import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { jobResource } from '#core/jobs/envelope.ts';
import { listJobs } from '#core/use-cases/list-jobs.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const page = await listJobs(deps(), context.caller, event.queryStringParameters ?? {});
    return json(200, {
      jobs: page.jobs.map((job) => jobResource(job, deps().clock.now())),
      next_cursor: page.nextCursor,
    });
  });
