import middy from '@middy/core';
import { deps } from '#aws/wiring.ts';
import { jobEnvelope } from '#core/jobs/envelope.ts';
import { getOwnJob } from '#core/use-cases/get-job.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(httpStack({ auth: 'required', authenticator: () => deps().authenticate }))
  .handler(async (event, context) => {
    const job = await getOwnJob(deps(), context.caller, event.pathParameters?.job_id ?? '');
    const account = job.account ? await deps().accounts.get(job.account) : null;
    return json(200, jobEnvelope(job, account));
  });
