import { deleteFile } from '#core/use-cases/delete-file.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, path }) => {
  await deleteFile(deps(), caller, path.file_id);
  return json(200, { result: true });
});
