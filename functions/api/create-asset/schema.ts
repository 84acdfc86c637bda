/** The contract of POST /assets: it takes the job input (shared, layers/http/schemas/) and answers the stored asset. */
import { endpointContract, example, JOB_BODY, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'key',
  operations: {
    'POST /assets': {
      operationId: 'createAsset',
      summary: 'Upload a reusable image',
      description:
        'Needs an account key. The body schema is that of job creation; the source image (`file` or `url`) ' +
        'is stored. Reference the asset later as `asset_id` in a job input.',
      tag: 'Assets',
      body: JOB_BODY,
      responses: {
        201: json('Asset', 'Stored.', {
          examples: example('A stored photo', {
            asset_id: 'ast_3v5b7n9m1q3w5e7r9t1y3u5i',
            expires_at: '2026-12-01T09:30:00.000Z',
            original_name: 'estate-front.jpg',
          }),
        }),
      },
    },
  },
});
