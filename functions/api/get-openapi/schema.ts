/** The contract of GET /openapi.json: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';

export const contract = endpointContract({
  operations: {
    'GET /openapi.json': {
      operationId: 'getOpenApi',
      summary: 'This OpenAPI document',
      tag: 'Meta',
      auth: 'none',
      responses: { 200: json('OpenApiDocument', 'The document.') },
      errors: [500],
    },
  },
});
