/**
 * How a run-time schema is described for the document, and the sentences endpoints share: what a contract
 * (functions/api/<endpoint>/schema.ts, which its handler imports) may use without building a schema, since
 * every schema built at import is paid by each cold start (./fields.ts holds the documented field types).
 */
import * as z from 'zod';
import { RESULT_TTL_DAYS } from '#core/jobs/expiry.ts';
import { DAY_SECONDS, formatDuration } from '#core/units.ts';

/** How long results last, in a sentence. */
export const resultsKept = `Results are kept ${formatDuration(RESULT_TTL_DAYS * DAY_SECONDS)}`;

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
