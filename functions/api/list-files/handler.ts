import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { fileResource, parsePageQuery } from '#core/files/files.ts';
import { listFiles } from '#core/use-cases/files.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const query = parsePageQuery(event.queryStringParameters ?? {});
    const { files, nextCursor } = await listFiles(deps(), context.caller, query);
    return json(200, { files: files.map(fileResource), next_cursor: nextCursor });
  });
