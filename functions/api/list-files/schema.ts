/** The contract of GET /files: its query and its page of files. */
import * as z from 'zod';
import { DEFAULT_PAGE_SIZE, PageQuerySchema } from '#core/files/files.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';
import { cursor, documentedFields, timestamp } from '#http/schemas/fields.ts';

/** Query parameters of GET /files: the schema its handler gets the query parsed with, described. */
const listFilesQuery = documentedFields(PageQuerySchema, {
  limit: { default: DEFAULT_PAGE_SIZE, description: 'Page size.' },
  before: { description: 'Cursor: `next_cursor` of the previous page (a `file_id`).' },
});

const FileItem = z
  .object({
    file_id: z.int().min(1).describe('Increasing with every new file; also the listing cursor.'),
    kind: z.enum(['asset', 'result']),
    name: z.string(),
    content_type: z.string(),
    bytes: z.int(),
    url: z
      .string()
      .nullable()
      .describe('Result path for a result (served like a job’s `url`); null for an asset.'),
    job_id: z.string().nullable().describe('The job of a result; null for an asset.'),
    asset_id: z.string().nullable().describe('The asset id; null for a result.'),
    created_at: timestamp,
    expires_at: timestamp,
  })
  .describe('Something the service stores for the caller (spec 2.6): an uploaded asset or a job’s result.');

const FileList = z
  .object({ files: z.array(FileItem), next_cursor: cursor })
  .describe('A page of the caller’s files (an administrator sees every file).');

export const contract = endpointContract({
  query: listFilesQuery,
  auth: 'key',
  responseSchemas: { FileItem, FileList },
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
