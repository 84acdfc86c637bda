/** The contract of DELETE /files/{file_id}: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';

export const contract = endpointContract({
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
