/** The schema components of get-quota's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { PRICES } from '#core/jobs/operations.ts';
import { endpointDocument } from '#http/openapi/contract.ts';

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

export const document = endpointDocument({
  responseSchemas: { Quota },
});
