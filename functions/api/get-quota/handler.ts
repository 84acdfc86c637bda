import { getQuota } from '#core/use-cases/account-settings.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller }) => json(200, await getQuota(deps(), caller)));
