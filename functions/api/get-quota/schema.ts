/** The contract of GET /quota: the balance it answers. */
import * as z from 'zod';
import { PRICES } from '#core/jobs/operations.ts';
import { endpointContract, example, json } from '#http/openapi/contract.ts';

const balance = (description: string) =>
  z.number().nullable().describe(`${description}; null for the master key.`);
const Quota = z
  .object({
    result: z.boolean(),
    quota: z.object({
      active: z.boolean(),
      authorized: z.boolean().describe('False for a guest session.'),
      remaining: balance('Credits available'),
      credits_remaining: balance('Same as `remaining`'),
      user_credits_remaining: balance('Same as `remaining`'),
      process_credit_cost: z.number().describe(String(PRICES.edit)),
      classification_credit_cost: z.number().describe(String(PRICES.analysis)),
      used_total: balance('Credits charged so far'),
      unlimited: z.literal(true).optional().describe('Present for the master key, which deducts no credits.'),
    }),
  })
  .describe(
    'Credit balance of the caller (spec 2.9): an API key’s account or the guest session’s trial balance.',
  );

export const contract = endpointContract({
  auth: 'key-or-guest',
  responseSchemas: { Quota },
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
