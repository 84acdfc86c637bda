import * as z from 'zod';

/** Mechanics shared by the generator and the document: zod schemas in the document's JSON Schema form. */
export type Json = Record<string, unknown>;

/** Drop what zod adds that says nothing here: closed objects (clients must accept new fields) and ±2^53 bounds. */
export function tidy({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodTypes; jsonSchema: Json }): void {
  const def = zodSchema._zod.def;
  if (def.type === 'object' && def.catchall === undefined) delete jsonSchema.additionalProperties;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  // A run-time schema that normalises with a transform is documented by the values it accepts
  // (`documented` in ./schemas.ts): those replace the type zod reads from the transform's input, and
  // the default it states is kept, which zod drops from the input of a transforming schema.
  const meta = z.globalRegistry.get(zodSchema);
  if (meta?.anyOf) delete jsonSchema.type;
  if (meta?.default !== undefined) jsonSchema.default = meta.default;
}

export const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export function inlineSchema(schema: z.ZodType): Json {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    override: tidy,
  }) as Json;
  return rest;
}

/** A schema whose description moves up to the parameter or header that uses it. */
export function describedSchema(schema: z.ZodType): Json {
  const { description, ...rest } = inlineSchema(schema);
  return { ...(description ? { description } : {}), schema: rest };
}
