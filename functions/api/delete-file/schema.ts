/** The contract of DELETE /files/{file_id}: its path parameter and its answer. */
import { fileIdSchema } from '#core/files/files.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';
import { documented } from '#http/schemas/describe.ts';

/** The path parameter only this endpoint has: the schema its handler gets it parsed by, described. */
const pathParameters = {
  file_id: documented(fileIdSchema(), { description: 'File id.' }),
};

export const contract = endpointContract({
  auth: 'key',
  pathParameters,
  // A file id that is no positive integer is a bad request (400), as a page cursor is, not a missing file.
  refusedPathStatus: 400,
  operations: {
    'DELETE /files/{file_id}': {
      operationId: 'deleteFile',
      summary: 'Delete a file',
      tag: 'Files',
      responses: { 200: json('ResultFlag', 'Deleted.') },
    },
  },
});
