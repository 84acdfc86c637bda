import { z } from 'zod';
import { BadRequestError } from '../errors.ts';
import { BACKGROUND_PRESETS } from './job.ts';
import { LEGACY_PROCESS_OPERATION_NAMES, OPERATION_NAMES, type Operation } from './operations.ts';
import { normalizePlateColor, parseBooleanish, type RequestedParams } from './params.ts';

const booleanish = (field: string) =>
  z.union([z.boolean(), z.string(), z.number()]).transform((value) => parseBooleanish(field, String(value)));

const httpUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//i.test(value), 'must be an http(s) URL');

/** `JobInput` (spec 2.1): the JSON body and the multipart text fields share this schema. */
export const JobInputSchema = z.object({
  mode: z.enum(OPERATION_NAMES).default('plate'),
  url: httpUrl.optional(),
  asset_id: z.string().min(1).max(100).optional(),
  upload_id: z.string().min(1).max(100).optional(),
  background: z.enum(BACKGROUND_PRESETS).optional(),
  plate_color: z.string().transform(normalizePlateColor).optional(),
  plate_smoothing: booleanish('plate_smoothing').optional(),
  plate_mask_only: booleanish('plate_mask_only').optional(),
  webhook_url: httpUrl.optional(),
});
export type JobInputFields = z.input<typeof JobInputSchema>;

/** The modes the legacy `/process` route accepts (its `mode` defaults to `plate` as every route's). */
export const LEGACY_PROCESS_MODES = LEGACY_PROCESS_OPERATION_NAMES;

export interface UploadedFile {
  bytes: Buffer;
  filename: string | null;
  contentType: string | null;
}

export type SourceSpec =
  | { kind: 'file'; file: UploadedFile }
  | { kind: 'url'; url: string }
  | { kind: 'asset'; assetId: string }
  | { kind: 'upload'; uploadId: string };

export interface JobRequest {
  operation: Operation;
  source: SourceSpec;
  requested: RequestedParams;
  backgroundFile: UploadedFile | null;
}

/** Empty form fields mean "not sent": HTML forms and legacy clients send them for every input. */
function dropEmpty(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== '' && value !== null));
}

export function parseJobRequest(
  fields: Record<string, unknown>,
  files: Record<string, UploadedFile>,
  allowedModes: readonly Operation[] = OPERATION_NAMES,
): JobRequest {
  const parsed = JobInputSchema.safeParse(dropEmpty(fields));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'body';
    throw new BadRequestError(`${field}: ${issue.message}`);
  }
  const input = parsed.data;
  if (!allowedModes.includes(input.mode)) {
    throw new BadRequestError(`mode must be one of ${allowedModes.join(', ')} on this route`);
  }
  const file = files.file;
  const sources = [file, input.url, input.asset_id, input.upload_id].filter((value) => value !== undefined);
  if (sources.length === 0)
    throw new BadRequestError('Send the source image as file, url, asset_id or upload_id');
  if (sources.length > 1) throw new BadRequestError('Send exactly one of file, url, asset_id or upload_id');
  const source: SourceSpec = file
    ? { kind: 'file', file }
    : input.url
      ? { kind: 'url', url: input.url }
      : input.upload_id
        ? { kind: 'upload', uploadId: input.upload_id }
        : { kind: 'asset', assetId: input.asset_id! };
  return {
    operation: input.mode,
    source,
    requested: {
      plateColor: input.plate_color,
      plateSmoothing: input.plate_smoothing,
      plateMaskOnly: input.plate_mask_only,
      background: input.background,
      webhookUrl: input.webhook_url,
    },
    backgroundFile: files.background_file ?? null,
  };
}
