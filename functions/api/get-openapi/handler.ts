import { json } from '#http/responses.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/**
 * The document `npm run openapi` writes, shipped as data: building it means building every endpoint's zod
 * schemas, which doubled this function's cold start (`npm run bench -- coldstart`). The unit test that
 * compares docs/openapi.json with the schemas keeps the two from drifting. Imported on the first request,
 * as its own chunk, and kept for the life of the container.
 */
const load = () => import('../../../docs/openapi.json', { with: { type: 'json' } });
let document: Awaited<ReturnType<typeof load>>['default'] | undefined;

/** GET /api/v1/openapi.json: public, like the spec it describes. */
export const handler = apiHandler(contract, async () => {
  document ??= (await load()).default;
  return json(200, document, { 'cache-control': 'public, max-age=300' });
});
