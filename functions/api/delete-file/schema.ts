/** The contract of DELETE /files/{file_id}: its path parameter and its answer. */
import { z } from 'zod';
import { endpointContract, json } from '#http/openapi.ts';

export const ResultFlag = z
  .object({ result: z.boolean() })
  .describe('Outcome of an operation without a body.');

/** The path parameters only this endpoint has; the handler checks with them. */
export const pathParameters = {
  file_id: z.int().min(1).describe('File id.'),
};

export const contract = endpointContract({
  responseSchemas: { ResultFlag },
  pathParameters,
  operations: {
    'DELETE /files/{file_id}': {
      operationId: 'deleteFile',
      summary: 'Delete a file',
      tag: 'Files',
      auth: 'key',
      responses: { 200: json('ResultFlag', 'Deleted.') },
    },
  },
});
