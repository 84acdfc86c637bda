import { assetResource } from '#core/files/asset-rules.ts';
import { parseJobRequest } from '#core/jobs/input.ts';
import { createAsset } from '#core/use-cases/create-asset.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** The body is a job body (spec 4, POST /assets); only its source, `file` or `url`, is kept. */
export const handler = apiHandler(contract, async ({ caller, body }) => {
  const { source } = parseJobRequest(body.fields, body.files);
  return json(201, assetResource(await createAsset(deps(), caller, source)));
});
