import { describe, expect, it } from 'vitest';
import { JobInputSchema } from '#core/jobs/input.ts';
import { ERROR_EXAMPLES, type ExampleSet, OPERATION_EXAMPLES } from '#http/openapi-examples.ts';
import { SERVICE_MODELS } from '#models/fetch.ts';
import { HEADS, MODELS } from '#models/manifest.ts';
import { buildOpenApiDocument, requestSchemas, responseSchemas } from '../../../functions/api/openapi.ts';

const schemaOf = (name: ExampleSet['schema']) =>
  (name in responseSchemas
    ? responseSchemas[name as keyof typeof responseSchemas]
    : requestSchemas[name as keyof typeof requestSchemas]) as {
    parse(value: unknown): unknown;
    shape: Record<string, unknown>;
  };

const cases = Object.entries(OPERATION_EXAMPLES).flatMap(([operation, { request, responses }]) => [
  ...Object.entries(request ?? {}).flatMap(([mediaType, set]) =>
    Object.entries(set.examples).map(([name, example]) => ({
      label: `${operation} ${mediaType} request "${name}"`,
      set,
      value: example.value,
      kind: 'request' as const,
    })),
  ),
  ...Object.entries(responses ?? {}).flatMap(([status, set]) =>
    Object.entries(set.examples).map(([name, example]) => ({
      label: `${operation} ${status} "${name}"`,
      set,
      value: example.value,
      kind: 'response' as const,
    })),
  ),
]);

describe('examples of the OpenAPI document', () => {
  it.each(cases.filter((c) => c.kind === 'response').map((c) => [c.label, c]))(
    '%s is exactly what its response schema describes (no field missing, none unknown)',
    (_, { set, value }) => {
      // zod drops unknown fields, so an example with a field the contract does not have comes back different.
      expect(schemaOf(set.schema).parse(value)).toEqual(value);
    },
  );

  it.each(cases.filter((c) => c.kind === 'request').map((c) => [c.label, c]))(
    '%s is accepted by the server’s own input schema and names only its fields',
    (_, { set, value }) => {
      expect(Object.keys(value as object).filter((k) => !(k in schemaOf(set.schema).shape))).toEqual([]);
      if (set.schema === 'JobInput') expect(() => JobInputSchema.parse(value)).not.toThrow();
      else schemaOf(set.schema).parse(value);
    },
  );

  it('error examples carry the spec’s error body with the status of their response', () => {
    const document = buildOpenApiDocument() as unknown as {
      components: { responses: Record<string, never> };
    };
    for (const [name, { value }] of Object.entries(ERROR_EXAMPLES)) {
      expect(responseSchemas.ErrorBody.parse(value)).toEqual(value);
      expect(JSON.stringify(document.components.responses[name])).toContain(JSON.stringify(value));
    }
  });

  it('names only model versions the service reports now (a refitted head or a new file shows in the reference)', () => {
    const current = new Set<string>([
      ...SERVICE_MODELS.map((id) => MODELS[id].version),
      ...Object.values(HEADS).map((head) => head.version),
    ]);
    const named: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) {
          if (key === 'model_version') named.push(...Object.values(inner as Record<string, string>));
          else walk(inner);
        }
      }
    };
    walk(cases.map((c) => c.value));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((version) => !current.has(version))).toEqual([]);
  });

  it('puts the examples where a reader of POST /jobs and GET /jobs/{job_id} looks for them', () => {
    // biome-ignore lint/suspicious/noExplicitAny: the test walks untyped JSON
    const paths = buildOpenApiDocument().paths as any;
    const create = paths['/jobs'].post;
    expect(Object.keys(create.requestBody.content['application/json'].examples)).toContain('plate_from_url');
    expect(create.responses['202'].content['application/json'].examples).toBeDefined();
    expect(
      Object.keys(paths['/jobs/{job_id}'].get.responses['200'].content['application/json'].examples),
    ).toEqual(['plate_succeeded', 'analysis_succeeded', 'plate_failed']);
  });
});
