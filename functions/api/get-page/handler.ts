import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { NotFoundError } from '#core/errors.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import type { HttpResult } from '#http/responses.ts';
import { pageFileFor, pageResponse } from '#http/static-pages.ts';
import { deps } from '#wiring/api.ts';

/** GET /, /docs and their static files: the web console and the API reference, public like the spec. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: 'none', deps }))
  .handler(async (event) => {
    const page = pageFileFor(event.rawPath);
    const response = page && (await pageResponse(page));
    if (!response) throw new NotFoundError(`No page at ${event.rawPath}`);
    return response;
  });
