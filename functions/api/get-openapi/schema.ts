/** The contract of GET /openapi.json: this document. */
import { endpointContract, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'none',
  operations: {
    'GET /openapi.json': {
      operationId: 'getOpenApi',
      summary: 'This OpenAPI document',
      tag: 'Meta',
      responses: { 200: json('OpenApiDocument', 'The document.') },
      errors: [500],
    },
  },
});
