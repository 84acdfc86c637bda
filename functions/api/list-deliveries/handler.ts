import { listJobDeliveries } from '#core/use-cases/deliver-webhook.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** The webhook delivery log of one of the caller's jobs. */
export const handler = apiHandler(contract, async ({ caller, path }) =>
  json(200, await listJobDeliveries(deps(), caller, path.job_id)),
);
