/** The schema components of download-batch's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';

const BatchDownloadLink = z
  .object({
    url: z.string().describe('Presigned storage link to the ZIP archive; needs no key.'),
    expires_in_seconds: z.int().describe('The link works this long (900).'),
  })
  .describe('Where to download the results of a batch (GET /batches/{batch_id}/download as JSON).');

export const document = endpointDocument({
  responseSchemas: { BatchDownloadLink },
});
