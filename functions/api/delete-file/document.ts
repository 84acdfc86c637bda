/** The schema components of delete-file's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';

const ResultFlag = z.object({ result: z.boolean() }).describe('Outcome of an operation without a body.');

export const document = endpointDocument({
  responseSchemas: { ResultFlag },
});
