/** The contract of GET /openapi.json: this document. */
import * as z from 'zod';
import { endpointContract, json } from '#http/openapi/contract.ts';

const OpenApiDocument = z
  .object({ openapi: z.string() })
  .describe('This OpenAPI 3.1 document (also committed as docs/openapi.json).');

export const contract = endpointContract({
  auth: 'none',
  responseSchemas: { OpenApiDocument },
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
