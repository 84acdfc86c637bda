import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import type { OpenApiDocument } from '#http/openapi/generator.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import { contract } from './schema.ts';

/** Built on the first request and kept for the life of the container: it only changes with the code. */
let document: OpenApiDocument | undefined;

/** GET /api/v1/openapi.json: public, like the spec it describes. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async () => {
    document ??= buildOpenApiDocument();
    return json(200, document, { 'cache-control': 'public, max-age=300' });
  });
