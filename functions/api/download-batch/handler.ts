import middy from '@middy/core';
import { deps } from '#aws/wiring.ts';
import { parseBooleanish } from '#core/jobs/params.ts';
import { downloadBatch } from '#core/use-cases/download-batch.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, redirect } from '#http/responses.ts';

/** GET /batches/{batch_id}/download[?partial=true]: 302 to the archive in storage (application/zip). */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(httpStack({ auth: 'key', deps }))
  .handler(async (event, context) => {
    const raw = event.queryStringParameters?.partial;
    const partial = raw === undefined || raw === '' ? false : parseBooleanish('partial', raw);
    const { url } = await downloadBatch(deps(), context.caller, event.pathParameters?.batch_id ?? '', {
      partial,
    });
    return redirect(url);
  });
