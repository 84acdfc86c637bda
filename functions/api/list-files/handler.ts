import { fileResource } from '#core/files/files.ts';
import { listFiles } from '#core/use-cases/list-files.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const { files, nextCursor } = await listFiles(deps(), caller, {
    limit: query.limit,
    before: query.before ?? null,
  });
  return json(200, { files: files.map(fileResource), next_cursor: nextCursor });
});
