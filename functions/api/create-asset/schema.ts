/** The contract of POST /assets: its route entries in the OpenAPI document. */
import { endpointContract, JOB_BODY, json } from '#http/openapi.ts';

export const contract = endpointContract({
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
