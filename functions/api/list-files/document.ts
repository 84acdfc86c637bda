/** The schema components of list-files's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';
import { cursor, timestamp } from '#http/schemas/fields.ts';

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

export const document = endpointDocument({
  responseSchemas: { FileItem, FileList },
});
