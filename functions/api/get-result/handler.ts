import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { resultLink } from '#core/use-cases/result-link.ts';
import { redirect } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/**
 * Result paths are capability URLs: the 120-bit job id is the secret, so an <img> tag or a plain
 * download works without a key. The bytes come straight from storage through a short-lived link.
 */
export const handler = apiHandler(contract, async ({ path }) =>
  redirect(await resultLink(deps(), path.job_id, path.name, RESULT_LINK_SECONDS)),
);
