import { uploadResource } from '#core/uploads/upload.ts';
import { createUpload } from '#core/use-cases/create-upload.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/**
 * POST /uploads `{content_type, filename, size}` (JSON or form): 201 with a presigned PUT for the file,
 * which is then named as `upload_id` by POST /jobs, /process, /analyze, /assets and /batches.
 */
export const handler = apiHandler(contract, async ({ caller, body: { fields } }) => {
  // A form sends the size as text.
  const body = typeof fields.size === 'string' ? { ...fields, size: Number(fields.size) } : fields;
  const { upload, url } = await createUpload(deps(), caller, body);
  return json(201, uploadResource(upload, url));
});
