import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';
import { BadRequestError } from '../errors.ts';
import { ASPECTS, BACKGROUNDS, FRAMINGS, MAX_WIDTH_RANGE, OUTPUT_FORMATS } from './job.ts';
import { OPERATION_NAMES, type Operation } from './operations.ts';
import { normalizePlateColor, parseBooleanish, type RequestedParams } from './params.ts';

const booleanish = (field: string) =>
  z.union([z.boolean(), z.string(), z.number()]).transform((value) => parseBooleanish(field, String(value)));

const httpUrl = () =>
  z
    .string()
    .url()
    .refine((value) => /^https?:\/\//i.test(value), 'must be an http(s) URL');

/**
 * The options of an image result, shared by jobs and batches (a batch takes every option a job takes).
 * `max_width` arrives as text in a form, so it is coerced.
 */
export const imageOptionsSchema = builtOnFirstUse(() =>
  z.object({
    background: z.enum(BACKGROUNDS).optional(),
    plate_color: z.string().transform(normalizePlateColor).optional(),
    plate_smoothing: booleanish('plate_smoothing').optional(),
    plate_mask_only: booleanish('plate_mask_only').optional(),
    format: z.enum(OUTPUT_FORMATS).optional(),
    max_width: z.coerce.number().int().min(MAX_WIDTH_RANGE.min).max(MAX_WIDTH_RANGE.max).optional(),
    framing: z.enum(FRAMINGS).optional(),
    shadow: booleanish('shadow').optional(),
    aspect: z.enum(ASPECTS).optional(),
    require_exterior: booleanish('require_exterior').optional(),
  }),
);

/** The parsed image options as the domain names them. */
export function requestedImageOptions(
  input: z.output<ReturnType<typeof imageOptionsSchema>>,
): RequestedParams {
  return {
    plateColor: input.plate_color,
    plateSmoothing: input.plate_smoothing,
    plateMaskOnly: input.plate_mask_only,
    background: input.background,
    format: input.format,
    maxWidth: input.max_width,
    framing: input.framing,
    shadow: input.shadow,
    aspect: input.aspect,
    requireExterior: input.require_exterior,
  };
}

/** A transparent result has no JPEG: refused at creation rather than failed in the workflow. */
export function checkImageOptions(requested: RequestedParams): void {
  if (requested.background === 'transparent' && requested.format === 'jpg') {
    throw new BadRequestError('format: jpg has no transparency; use png or webp with background transparent');
  }
  if (requested.framing === 'keep' && requested.aspect && requested.aspect !== 'keep') {
    throw new BadRequestError(
      `aspect: ${requested.aspect} shapes the canvas of a centred car; it cannot go with framing: keep`,
    );
  }
}

/** `JobInput` (spec 2.1): the JSON body and the multipart text fields share this schema. */
export const jobInputSchema = builtOnFirstUse(() =>
  z.object({
    mode: z.enum(OPERATION_NAMES).default('plate'),
    url: httpUrl().optional(),
    asset_id: z.string().min(1).max(100).optional(),
    upload_id: z.string().min(1).max(100).optional(),
    ...imageOptionsSchema().shape,
    webhook_url: httpUrl().optional(),
    require_plate: booleanish('require_plate').optional(),
  }),
);

/** The modes that hide plates, and so can be told that a visible plate is a failure. */
const REQUIRE_PLATE_MODES = ['plate', 'studio_background'] as const satisfies readonly Operation[];

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
  const parsed = jobInputSchema().safeParse(dropEmpty(fields));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'body';
    throw new BadRequestError(`${field}: ${issue.message}`);
  }
  const input = parsed.data;
  if (!allowedModes.includes(input.mode)) {
    throw new BadRequestError(`mode must be one of ${allowedModes.join(', ')} on this route`);
  }
  if (input.require_plate && !(REQUIRE_PLATE_MODES as readonly Operation[]).includes(input.mode)) {
    throw new BadRequestError(
      `require_plate applies to ${REQUIRE_PLATE_MODES.join(' and ')}; ${input.mode} hides no plate`,
    );
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
  const requested: RequestedParams = {
    ...requestedImageOptions(input),
    webhookUrl: input.webhook_url,
    requirePlate: input.require_plate,
  };
  checkImageOptions(requested);
  return {
    operation: input.mode,
    source,
    requested,
    backgroundFile: files.background_file ?? null,
  };
}
