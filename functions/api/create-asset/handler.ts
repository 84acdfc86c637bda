import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { assetResource } from '#core/files/assets.ts';
import { parseJobRequest } from '#core/jobs/input.ts';
import { createAsset } from '#core/use-cases/assets.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/** The body is a job body (spec 4, POST /assets); only its source, `file` or `url`, is kept. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (_event, context) => {
    const { source } = parseJobRequest(context.body.fields, context.body.files);
    const asset = await createAsset(deps(), context.caller, source);
    return json(201, assetResource(asset));
  });
