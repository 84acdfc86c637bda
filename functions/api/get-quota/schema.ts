/** The contract of GET /quota: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';

export const contract = endpointContract({
  operations: {
    'GET /quota': {
      operationId: 'getQuota',
      summary: 'Credit balance of the calling key',
      tag: 'Account',
      auth: 'key-or-guest',
      responses: { 200: json('Quota', 'The balance.') },
    },
  },
});
