/** The contract of POST /assets: it takes the job input (shared, layers/http/schemas.ts) and answers the stored asset. */
import { z } from 'zod';
import { endpointContract, JOB_BODY, json } from '#http/openapi/generator.ts';
import { timestamp } from '#http/schemas.ts';

export const Asset = z
  .object({
    asset_id: z.string().describe('Reference it as `asset_id` in a job input.'),
    expires_at: timestamp,
    original_name: z.string(),
  })
  .describe('A stored source image (spec 2.5).');

export const contract = endpointContract({
  responseSchemas: { Asset },
  operations: {
    'POST /assets': {
      operationId: 'createAsset',
      summary: 'Upload a reusable image',
      description:
        'Needs an account key. The body schema is that of job creation; the source image (`file` or `url`) ' +
        'is stored. Reference the asset later as `asset_id` in a job input.',
      tag: 'Assets',
      auth: 'key',
      body: JOB_BODY,
      responses: { 201: json('Asset', 'Stored.') },
    },
  },
});
