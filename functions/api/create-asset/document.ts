/** The schema components of create-asset's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';
import { timestamp } from '#http/schemas/fields.ts';

const Asset = z
  .object({
    asset_id: z.string().describe('Reference it as `asset_id` in a job input.'),
    expires_at: timestamp,
    original_name: z.string(),
  })
  .describe('A stored source image (spec 2.5).');

export const document = endpointDocument({
  responseSchemas: { Asset },
});
