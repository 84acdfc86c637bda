/** The contract of POST /batches: the batch input (the run-time `batchInputSchema`, described), as a form and as JSON, and its answer. */
import { batchPath } from '#core/batches/batch.ts';
import { credits, PRICES } from '#core/jobs/operations.ts';
import { endpointContract, example, json, location } from '#http/openapi/contract.ts';
import { BATCH_EXAMPLE_ID, batchExample } from '#http/schemas/batch-examples.ts';

export const contract = endpointContract({
  auth: 'key',
  operations: {
    'POST /batches': {
      operationId: 'createBatch',
      summary: 'Upload a ZIP archive as a batch',
      description:
        'Needs an account key. Not idempotent: every upload is a new batch. Every photo becomes an ordinary ' +
        `job when its turn comes, reserving its ${credits(PRICES.edit)} then (not now), and is charged only if it succeeds; ` +
        'at most `concurrency` run at once. 402 when the account cannot pay for one photo; 415 when `archive` ' +
        'is not a ZIP; 400 for an entry that could leave the folder it is unpacked into (`..`, absolute paths, ' +
        'links) or an archive without photos; 413 naming the limit an archive exceeds (entries, entry size, ' +
        'total uncompressed size, compression ratio).',
      tag: 'Batches',
      body: { 'multipart/form-data': 'BatchForm', 'application/json': 'BatchInput' },
      responses: {
        202: json('BatchCreated', 'Accepted: the batch is processing.', {
          headers: location('Path of the batch.'),
          examples: example('Three photos, being unpacked', {
            batch: batchExample('unpacking'),
            status_url: batchPath(BATCH_EXAMPLE_ID),
          }),
        }),
      },
    },
  },
});
