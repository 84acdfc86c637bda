import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { DownloadBatchQuery } from '#core/batches/input.ts';
import { DOWNLOAD_LINK_SECONDS, downloadBatch } from '#core/use-cases/download-batch.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json, redirect } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/**
 * GET /batches/{batch_id}/download[?partial=true]: 302 to the archive in storage (application/zip) once
 * a workflow step has built it; until then 202 with Retry-After. `Accept: application/json` (and not
 * application/zip) gets the link as JSON instead of the redirect.
 */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const { partial } = DownloadBatchQuery.parse({ partial: event.queryStringParameters?.partial });
    const batchId = event.pathParameters?.batch_id ?? '';
    const answer = await downloadBatch(deps(), context.caller, batchId, { partial });
    if (answer.ready) {
      // A browser page cannot read a redirect's Location, nor follow it with its key in a header without
      // handing the key to the storage origin: it asks for the link as JSON and navigates to it.
      if (wantsLink(event.headers?.accept))
        return json(200, { url: answer.url, expires_in_seconds: DOWNLOAD_LINK_SECONDS });
      return redirect(answer.url);
    }
    return json(
      202,
      { status: 'building', retry_after: answer.retryAfterSeconds, batch_id: batchId },
      { 'retry-after': String(answer.retryAfterSeconds) },
    );
  });

const wantsLink = (accept: string | undefined): boolean =>
  accept !== undefined && /application\/json/i.test(accept) && !/application\/zip/i.test(accept);
