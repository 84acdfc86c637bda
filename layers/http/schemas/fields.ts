/** The building blocks of the shared and endpoint schemas: field types, and how a run-time schema is described. */
import * as z from 'zod';
import { RESULT_LINK_SECONDS } from '#core/jobs/envelope.ts';
import { RESULT_TTL_DAYS } from '#core/jobs/expiry.ts';
import { BOOLEAN_SPELLINGS, PLATE_COLOR_NAMES } from '#core/jobs/params.ts';
import { DAY_SECONDS, formatDuration } from '#core/units.ts';

export { BOOLEAN_SPELLINGS };

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];

/** How long results last, in a sentence. */
export const resultsKept = `Results are kept ${formatDuration(RESULT_TTL_DAYS * DAY_SECONDS)}`;

export const resultUrl = z
  .string()
  .describe(
    'Path of the result image, `/api/v1/results/{job_id}/{name}`, relative to the service address. It needs ' +
      'no key (the 120-bit random job id is the capability, so `<img src>` and plain downloads work) and ' +
      `answers 302 to a presigned storage link valid ${formatDuration(RESULT_LINK_SECONDS)}. ${resultsKept} ` +
      'after the job finished, until its `expires_at`; from then on the job no longer shows this field.',
  );
export const resultPath = (what: string) => z.string().describe(`Path of the ${what}; served like \`url\`.`);
export const timestamp = z.string().meta({ format: 'date-time' });
export const cursor = z.int().nullable().meta({
  format: 'int64',
  description: 'Pass as `before` to read the next page; null on the last page.',
});
export const imageFile = (description: string) => z.file().mime(IMAGE_TYPES).describe(description);

/**
 * A request schema is the very object that validates at run time (layers/core); this file only
 * describes it. The description goes into zod's global registry, keyed by that object, so nothing here
 * copies a field and the unit test can check identity. A field that normalises with a transform gets
 * the values it accepts as JSON Schema too, since zod cannot show what a transform takes.
 */
export function documented<T extends z.ZodType>(schema: T, meta: z.core.GlobalMeta): T {
  z.globalRegistry.add(schema, meta);
  return schema;
}

/**
 * Describes a run-time object schema's fields (and, given `meta`, the schema itself) in one statement.
 * `fields` is keyed by the schema's own field names, so a renamed or removed field fails to compile.
 */
export function documentedFields<S extends z.ZodObject>(
  schema: S,
  fields: { readonly [K in keyof S['shape']]?: z.core.GlobalMeta },
  meta?: z.core.GlobalMeta,
): S {
  for (const [name, fieldMeta] of Object.entries(fields)) {
    if (fieldMeta) documented(schema.shape[name] as z.ZodType, fieldMeta);
  }
  return meta ? documented(schema, meta) : schema;
}

export const colourValues = {
  anyOf: [
    { type: 'string', pattern: HEX_COLOR.source },
    { type: 'string', enum: PLATE_COLOR_NAMES },
  ],
};
export const booleanValues = {
  anyOf: [{ type: 'boolean' }, { type: 'string', enum: BOOLEAN_SPELLINGS }, { type: 'number', enum: [0, 1] }],
};
