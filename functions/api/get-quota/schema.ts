/** The contract of GET /quota: the balance it answers. */
import { z } from 'zod';
import { endpointContract, json } from '#http/openapi/generator.ts';

const balance = (description: string) =>
  z.number().nullable().describe(`${description}; null for the master key.`);
export const Quota = z
  .object({
    result: z.boolean(),
    quota: z.object({
      active: z.boolean(),
      authorized: z.boolean().describe('False for a guest session.'),
      remaining: balance('Credits available'),
      credits_remaining: balance('Same as `remaining`'),
      user_credits_remaining: balance('Same as `remaining`'),
      process_credit_cost: z.number().describe('5'),
      classification_credit_cost: z.number().describe('1'),
      used_total: balance('Credits charged so far'),
      unlimited: z.literal(true).optional().describe('Present for the master key, which deducts no credits.'),
    }),
  })
  .describe(
    'Credit balance of the caller (spec 2.9): an API key’s account or the guest session’s trial balance.',
  );

export const contract = endpointContract({
  responseSchemas: { Quota },
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
