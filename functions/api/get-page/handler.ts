import { NotFoundError } from '#core/errors.ts';
import { pageFileFor, pageResponse } from '#http/static-pages.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** GET /, /docs and their static files: the web console and the API reference. */
export const handler = apiHandler(contract, async ({ event }) => {
  const page = pageFileFor(event.rawPath);
  const response = page && (await pageResponse(page));
  if (!response) throw new NotFoundError(`No page at ${event.rawPath}`);
  return response;
});
