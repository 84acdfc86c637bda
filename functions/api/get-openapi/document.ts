/** The schema components of get-openapi's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';

const OpenApiDocument = z
  .object({ openapi: z.string() })
  .describe('This OpenAPI 3.1 document (also committed as docs/openapi.json).');

export const document = endpointDocument({
  responseSchemas: { OpenApiDocument },
});
