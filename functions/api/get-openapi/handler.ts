import type { OpenApiDocument } from '#http/openapi/generator.ts';
import { json } from '#http/responses.ts';
import { apiHandler } from '../api-handler.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import { contract } from './schema.ts';

/** Built on the first request and kept for the life of the container: it only changes with the code. */
let document: OpenApiDocument | undefined;

/** GET /api/v1/openapi.json: public, like the spec it describes. */
export const handler = apiHandler(contract, async () => {
  document ??= buildOpenApiDocument();
  return json(200, document, { 'cache-control': 'public, max-age=300' });
});
