/**
 * The contract of POST /uploads: its body and its answer, as the OpenAPI document describes them
 * (registered in layers/http/schemas.ts beside the other endpoints' components), and its route entry.
 */
import { endpointContract, json } from '#http/openapi.ts';

export { UploadCreated, UploadRequest } from '#http/schemas.ts';

export const contract = endpointContract({
  operations: {
    'POST /uploads': {
      operationId: 'createUpload',
      summary: 'Open a direct upload (photos over the request limit, archives up to 2 GB)',
      description:
        'Needs an account key. Answers a presigned storage URL: PUT the file there yourself (plain HTTP, ' +
        'no key), with the `content-type` header given and exactly `size` bytes; storage refuses any other ' +
        'type or length (403). Then name the file as `upload_id` in POST /jobs, /process, /analyze, /assets ' +
        '(photos) or /batches (ZIP archives), JSON or form. An upload may be used by any number of requests ' +
        'of its owner for 24 hours (then 410); another owner’s is 404; one not yet PUT is 409; one whose ' +
        'stored size differs from `size` is 400; bytes that are not an image (or not a ZIP for batches) are ' +
        '415. Nothing is charged for an upload or for a refused use of it. Limits: photos 40 MB and 100 ' +
        'megapixels, archives 2 GB (413 over).',
      tag: 'Uploads',
      auth: 'key',
      body: { 'application/json': 'UploadRequest', 'application/x-www-form-urlencoded': 'UploadRequest' },
      responses: { 201: json('UploadCreated', 'Upload opened: PUT the file to `url`.') },
    },
  },
});
