/** The contract of GET /files: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';
import { listFilesQuery } from '#http/schemas.ts';

export const contract = endpointContract({
  operations: {
    'GET /files': {
      operationId: 'listFiles',
      summary: 'List the caller’s files',
      description: 'Ordinary keys see their own files; an administrator keeps the legacy global listing.',
      tag: 'Files',
      auth: 'key',
      query: listFilesQuery,
      responses: { 200: json('FileList', 'A page of files.') },
    },
  },
});
