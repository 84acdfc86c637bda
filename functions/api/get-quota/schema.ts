/** The contract of GET /quota: the balance it answers. */
import { PRICES } from '#core/jobs/operations.ts';
import { endpointContract, example, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
  operations: {
    'GET /quota': {
      operationId: 'getQuota',
      summary: 'Credit balance of the calling key',
      tag: 'Account',
      responses: {
        200: json('Quota', 'The balance.', {
          examples: example('An API key with 95 credits left', {
            result: true,
            quota: {
              active: true,
              authorized: true,
              remaining: 95,
              credits_remaining: 95,
              user_credits_remaining: 95,
              process_credit_cost: PRICES.edit,
              classification_credit_cost: PRICES.analysis,
              used_total: 5,
            },
          }),
        }),
      },
    },
  },
});
