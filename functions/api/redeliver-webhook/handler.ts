import { redeliverWebhook } from '#core/use-cases/deliver-webhook.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** Send a finished job's final JSON to its webhook once more, now; answers with that delivery. */
export const handler = apiHandler(contract, async ({ caller, path }) =>
  json(200, await redeliverWebhook(deps(), caller, path.job_id)),
);
