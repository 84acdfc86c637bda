import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { cancelOwnJob } from '#core/use-cases/control-job.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { jobResponse } from '#http/job-response.ts';
import type { HttpResult } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const { status, job } = await cancelOwnJob(deps(), context.caller, event.pathParameters?.job_id ?? '');
    return jobResponse(deps(), status, job);
  });
