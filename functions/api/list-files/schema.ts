/** The contract of GET /files: its query and its page of files. */
import { DEFAULT_PAGE_SIZE, pageQuerySchema } from '#core/files/files.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/describe.ts';

export const contract = endpointContract({
  /** Query parameters of GET /files: the schema its handler gets the query parsed with, described. */
  query: () =>
    documentedFields(pageQuerySchema(), {
      limit: { default: DEFAULT_PAGE_SIZE, description: 'Page size.' },
      before: { description: 'Cursor: `next_cursor` of the previous page (a `file_id`).' },
    }),
  auth: 'key',
  operations: {
    'GET /files': {
      operationId: 'listFiles',
      summary: 'List the caller’s files',
      description: 'Ordinary keys see their own files; an administrator keeps the legacy global listing.',
      tag: 'Files',
      responses: { 200: json('FileList', 'A page of files.') },
    },
  },
});
