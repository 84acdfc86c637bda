/** The contract of POST /batches: its route entries in the OpenAPI document. */
import { endpointContract, json, location } from '#http/openapi.ts';

export const contract = endpointContract({
  operations: {
    'POST /batches': {
      operationId: 'createBatch',
      summary: 'Upload a ZIP archive as a batch',
      description:
        'Needs an account key. Not idempotent: every upload is a new batch. Every photo becomes an ordinary ' +
        'job when its turn comes, reserving its 5 credits then (not now), and is charged only if it succeeds; ' +
        'at most `concurrency` run at once. 402 when the account cannot pay for one photo; 415 when `archive` ' +
        'is not a ZIP; 400 for an entry that could leave the folder it is unpacked into (`..`, absolute paths, ' +
        'links) or an archive without photos; 413 naming the limit an archive exceeds (entries, entry size, ' +
        'total uncompressed size, compression ratio).',
      tag: 'Batches',
      auth: 'key',
      body: { 'multipart/form-data': 'BatchForm', 'application/json': 'BatchInput' },
      responses: {
        202: json('BatchCreated', 'Accepted: the batch is processing.', {
          headers: location('Path of the batch.'),
        }),
      },
    },
  },
});
