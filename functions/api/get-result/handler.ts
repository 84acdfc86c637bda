import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { NotFoundError } from '#core/errors.ts';
import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { resultLink } from '#core/use-cases/result-link.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, redirect } from '#http/responses.ts';
import { sharedPathParameters } from '#http/schemas/shared.ts';
import { deps } from '#wiring/api.ts';
import { contract, pathParameters } from './schema.ts';

/**
 * Result paths are capability URLs: the 120-bit job id is the secret, so an <img> tag or a plain
 * download works without a key. The bytes come straight from storage through a short-lived link.
 */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event) => {
    const jobId = event.pathParameters?.job_id ?? '';
    const name = event.pathParameters?.name ?? '';
    if (!sharedPathParameters.job_id.safeParse(jobId).success || !pathParameters.name.safeParse(name).success)
      throw new NotFoundError('No such result');
    return redirect(await resultLink(deps(), jobId, name, RESULT_LINK_SECONDS));
  });
