/** The contract of GET /batches/{batch_id}: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi/generator.ts';

export const contract = endpointContract({
  operations: {
    'GET /batches/{batch_id}': {
      operationId: 'getBatch',
      summary: 'Read a batch',
      description: 'The batch with every item. Another owner’s batch answers 404.',
      tag: 'Batches',
      auth: 'key',
      responses: { 200: json('BatchEnvelope', 'The batch.') },
    },
  },
});
