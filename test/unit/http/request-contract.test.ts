import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { batchInputSchema, downloadBatchQuery } from '#core/batches/input.ts';
import { fileIdSchema, pageQuerySchema } from '#core/files/files.ts';
import { JOB_ID_PATTERN, newJobId } from '#core/jobs/ids.ts';
import { jobInputSchema } from '#core/jobs/input.ts';
import { webhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { uploadRequestSchema } from '#core/use-cases/create-upload.ts';
import { listJobsQuery } from '#core/use-cases/list-jobs.ts';
import { sharedPathParameters } from '#http/schemas/shared.ts';
import { contract as deleteFile } from '../../../functions/api/delete-file/schema.ts';
import { ENDPOINTS } from '../../../functions/api/endpoints.ts';
import { contract as getResult } from '../../../functions/api/get-result/schema.ts';
import { ROUTE_CONTRACTS, requestSchemas } from '../../../functions/api/openapi.ts';

/**
 * The request a route documents is the one it validates at run time: each documented field is the very
 * zod object the handler's parser uses, not a copy that could drift. Only what no schema parses is
 * exempt: uploads (read by the body parser) and the `/process` mode, checked by `parseJobRequest`
 * against `LEGACY_PROCESS_OPERATION_NAMES`.
 */
const RUNTIME: Record<keyof typeof requestSchemas, z.ZodObject> = {
  JobInput: jobInputSchema(),
  JobInputForm: jobInputSchema(),
  LegacyProcessForm: jobInputSchema(),
  LegacyAnalyzeForm: jobInputSchema(),
  BatchForm: batchInputSchema(),
  BatchInput: batchInputSchema(),
  UploadRequest: uploadRequestSchema(),
  WebhookUpdate: webhookUpdateSchema(),
};
const NOT_PARSED_BY_A_SCHEMA = new Set(['file', 'background_file', 'archive', 'LegacyProcessForm.mode']);

describe('one request schema per route', () => {
  const bodies = Object.entries(ROUTE_CONTRACTS).flatMap(([route, spec]) =>
    Object.entries(spec.body ?? {}).map(([mediaType, name]) => ({ route, mediaType, name })),
  );

  it.each(bodies)('$route documents as $mediaType the fields its parser validates', ({ name }) => {
    const documented = requestSchemas[name as keyof typeof requestSchemas] as z.ZodObject;
    const runtime = RUNTIME[name as keyof typeof requestSchemas];
    for (const [field, schema] of Object.entries(documented.shape)) {
      if (NOT_PARSED_BY_A_SCHEMA.has(field) || NOT_PARSED_BY_A_SCHEMA.has(`${name}.${field}`)) continue;
      expect(schema === runtime.shape[field], `${name}.${field} is not the run-time schema`).toBe(true);
    }
  });

  it('documents every field the full job and batch inputs parse', () => {
    for (const name of ['JobInput', 'JobInputForm', 'BatchForm', 'BatchInput', 'UploadRequest'] as const) {
      for (const field of Object.keys(RUNTIME[name].shape)) {
        expect(Object.keys(requestSchemas[name].shape), name).toContain(field);
      }
    }
  });

  it('documents every field the legacy forms parse: /analyze all but the mode it sets itself', () => {
    const fields = Object.keys(jobInputSchema().shape);
    expect(Object.keys(requestSchemas.LegacyProcessForm.shape)).toEqual(expect.arrayContaining(fields));
    expect(Object.keys(requestSchemas.LegacyAnalyzeForm.shape).sort()).toEqual(
      [...fields.filter((field) => field !== 'mode'), 'file', 'background_file'].sort(),
    );
  });

  it('documents the queries the use cases and handlers parse with', () => {
    expect(ENDPOINTS['list-jobs'].query()).toBe(listJobsQuery());
    expect(ENDPOINTS['download-batch'].query()).toBe(downloadBatchQuery());
  });
});

describe('one schema per query and path parameter', () => {
  it('documents the GET /files query and the file id that the handler checks with', () => {
    expect(ENDPOINTS['list-files'].query()).toBe(pageQuerySchema());
    expect(deleteFile.pathParameters.file_id).toBe(fileIdSchema());
  });

  it('documents as job_id exactly the ids the service issues, which resultLink checks with', () => {
    const jobId = sharedPathParameters.job_id;
    expect(jobId.safeParse(newJobId()).success).toBe(true);
    for (const id of [
      'job_123',
      `JOB_${'a'.repeat(24)}`,
      `job_${'a'.repeat(25)}`,
      `job_${'a'.repeat(23)}/`,
    ]) {
      expect(jobId.safeParse(id).success, id).toBe(false);
    }
    expect(JOB_ID_PATTERN.test(newJobId())).toBe(true);
    expect(getResult.pathParameters.name.safeParse('result.jpg').success).toBe(true);
    expect(getResult.pathParameters.name.safeParse('../result.jpg').success).toBe(false);
  });
});
