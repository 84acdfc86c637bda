import { DOWNLOAD_LINK_SECONDS, downloadBatch } from '#core/use-cases/download-batch.ts';
import { json, redirect } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/**
 * GET /batches/{batch_id}/download[?partial=true]: 302 to the archive in storage (application/zip) once
 * a workflow step has built it; until then 202 with Retry-After. `Accept: application/json` (and not
 * application/zip) gets the link as JSON instead of the redirect: a browser page cannot read a redirect's
 * Location, nor follow it with its key in a header without handing the key to the storage origin.
 */
export const handler = apiHandler(contract, async ({ event, caller, path, query }) => {
  const answer = await downloadBatch(deps(), caller, path.batch_id, { partial: query.partial });
  if (!answer.ready) {
    const retryAfter = answer.retryAfterSeconds;
    const building = { status: 'building', retry_after: retryAfter, batch_id: path.batch_id };
    return json(202, building, { 'retry-after': String(retryAfter) });
  }
  if (!wantsLink(event.headers?.accept)) return redirect(answer.url);
  return json(200, { url: answer.url, expires_in_seconds: DOWNLOAD_LINK_SECONDS });
});

const wantsLink = (accept: string | undefined): boolean =>
  accept !== undefined && /application\/json/i.test(accept) && !/application\/zip/i.test(accept);
