import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { BatchInputSchema, DownloadBatchQuery } from '#core/batches/input.ts';
import { JobInputSchema } from '#core/jobs/input.ts';
import { WebhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { ListJobsQuery } from '#core/use-cases/list-jobs.ts';
import { UploadRequestSchema } from '#core/use-cases/uploads.ts';
import { OPERATIONS, requestSchemas } from '../../../functions/api/openapi.ts';

/**
 * The request a route documents is the one it validates at run time: each documented field is the very
 * zod object the handler's parser uses, not a copy that could drift. Only what no schema parses is
 * exempt: uploads (read by the body parser) and the `/process` mode, checked by `parseJobRequest`
 * against `LEGACY_PROCESS_MODES`.
 */
const RUNTIME: Record<keyof typeof requestSchemas, z.ZodObject> = {
  JobInput: JobInputSchema,
  JobInputForm: JobInputSchema,
  LegacyProcessForm: JobInputSchema,
  LegacyAnalyzeForm: JobInputSchema,
  BatchForm: BatchInputSchema,
  BatchInput: BatchInputSchema,
  UploadRequest: UploadRequestSchema,
  WebhookUpdate: WebhookUpdateSchema,
};
const NOT_PARSED_BY_A_SCHEMA = new Set(['file', 'background_file', 'archive', 'LegacyProcessForm.mode']);

describe('one request schema per route', () => {
  const bodies = Object.entries(OPERATIONS).flatMap(([route, spec]) =>
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

  it('documents the queries the use cases and handlers parse with', () => {
    expect(OPERATIONS['GET /jobs']!.query).toBe(ListJobsQuery);
    expect(OPERATIONS['GET /batches/{batch_id}/download']!.query).toBe(DownloadBatchQuery);
  });
});
