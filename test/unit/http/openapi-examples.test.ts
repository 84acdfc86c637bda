import { describe, expect, it } from 'vitest';
import { jobInputSchema } from '#core/jobs/input.ts';
import { ERRORS } from '#http/openapi/errors.ts';
import { SERVICE_MODELS } from '#models/fetch.ts';
import { HEADS, MODELS } from '#models/manifest.ts';
import {
  buildOpenApiDocument,
  ROUTE_CONTRACTS,
  requestSchemas,
  responseSchemas,
} from '../../../functions/api/openapi.ts';

const schemaOf = (name: string) =>
  (name in responseSchemas
    ? responseSchemas[name as keyof typeof responseSchemas]
    : requestSchemas[name as keyof typeof requestSchemas]) as {
    parse(value: unknown): unknown;
    shape: Record<string, unknown>;
  };

/** Every example the endpoints' contracts give, with the schema component it illustrates. */
const cases = Object.entries(ROUTE_CONTRACTS).flatMap(([operation, spec]) => [
  ...Object.entries(spec.bodyExamples ?? {}).flatMap(([mediaType, examples]) =>
    Object.entries(examples).map(([name, example]) => ({
      label: `${operation} ${mediaType} request "${name}"`,
      schema: spec.body![mediaType]!,
      value: example.value,
      kind: 'request' as const,
    })),
  ),
  ...Object.entries(spec.responses).flatMap(([status, response]) =>
    Object.entries(response.examples ?? {}).map(([name, example]) => ({
      label: `${operation} ${status} "${name}"`,
      schema: response.schema!,
      value: example.value,
      kind: 'response' as const,
    })),
  ),
]);
const errorExamples = Object.values(ERRORS).flatMap((error) =>
  'example' in error ? [{ name: error.name, value: error.example.value }] : [],
);

describe('examples of the OpenAPI document', () => {
  it.each(cases.filter((c) => c.kind === 'response').map((c) => [c.label, c]))(
    '%s is exactly what its response schema describes (no field missing, none unknown)',
    (_, { schema, value }) => {
      // zod drops unknown fields, so an example with a field the contract does not have comes back different.
      expect(schemaOf(schema).parse(value)).toEqual(value);
    },
  );

  it.each(cases.filter((c) => c.kind === 'request').map((c) => [c.label, c]))(
    '%s is accepted by the server’s own input schema and names only its fields',
    (_, { schema, value }) => {
      expect(Object.keys(value as object).filter((k) => !(k in schemaOf(schema).shape))).toEqual([]);
      if (schema === 'JobInput') expect(() => jobInputSchema().parse(value)).not.toThrow();
      else schemaOf(schema).parse(value);
    },
  );

  it('error examples carry the spec’s error body with the status of their response', () => {
    const document = buildOpenApiDocument() as unknown as {
      components: { responses: Record<string, never> };
    };
    expect(errorExamples.length).toBeGreaterThan(3);
    for (const { name, value } of errorExamples) {
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
