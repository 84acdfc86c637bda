/** The contract of GET /batches/{batch_id}: its route entries in the OpenAPI document. */
import { endpointContract, example, json } from '#http/openapi/contract.ts';
import { batchExample } from '#http/schemas/batch-examples.ts';

export const contract = endpointContract({
  auth: 'key',
  operations: {
    'GET /batches/{batch_id}': {
      operationId: 'getBatch',
      summary: 'Read a batch',
      description: 'The batch with every item. Another owner’s batch answers 404.',
      tag: 'Batches',
      responses: {
        200: json('BatchEnvelope', 'The batch.', {
          examples: example('A completed batch', { batch: batchExample('completed') }),
        }),
      },
    },
  },
});
