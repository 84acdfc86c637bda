import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { uploadResource } from '#core/uploads/upload.ts';
import { createUpload } from '#core/use-cases/uploads.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/**
 * POST /uploads `{content_type, filename, size}` (JSON or form): 201 with a presigned PUT for the file,
 * which is then named as `upload_id` by POST /jobs, /process, /analyze, /assets and /batches.
 */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (_event, context) => {
    const { fields } = context.body;
    // A form sends the size as text.
    const body = typeof fields.size === 'string' ? { ...fields, size: Number(fields.size) } : fields;
    const { upload, url } = await createUpload(deps(), context.caller, body);
    return json(201, uploadResource(upload, url));
  });
