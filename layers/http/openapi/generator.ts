/**
 * The OpenAPI 3.1 document of the API, built from the endpoints' contracts (./contract.ts): each
 * `functions/api/<endpoint>/schema.ts` gives its routes, who may call them, the schemas only it uses (the
 * run-time ones) and their examples, ../schemas/ what several share, ./document.ts, ./errors.ts and
 * ./webhooks.ts what is not per endpoint (limits, security, errors, webhooks), and this file the generation.
 * functions/api/endpoints.ts lists the endpoints.
 */
import * as z from 'zod';
import type { AuthMode } from '../http-stack.ts';
import { sharedPathParameters, sharedRequestSchemas, sharedResponseSchemas } from '../schemas/shared.ts';
import type { EndpointContract, EndpointDocument, OperationSpec, ResponseSpec } from './contract.ts';
import { COMMON_COMPONENTS, DOCUMENT_HEAD, OPENAPI_VERSION, SECURITY } from './document.ts';
import { ALL_ERRORS, ERRORS, type ErrorStatus } from './errors.ts';
import { componentRef, inlineSchema, type Json, tidy } from './json-schema.ts';
import { WEBHOOKS } from './webhooks.ts';

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
const METHOD_ORDER: readonly Method[] = ['get', 'put', 'post', 'patch', 'delete'];

type Schemas = Record<string, z.ZodType>;

// ---------------------------------------------------------------- generation

/** Each entry of `schemas` becomes a component; an entry nested in another is a `$ref` to it. */
function components(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    uri: (id) => componentRef(id).$ref,
    override: tidy,
  }).schemas;
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(generated)) {
    if (!(id in schemas)) throw new Error(`zod extracted an unregistered shared schema (${id}); register it`);
    const { $schema: _schema, $id: _id, '~standard': _standard, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

/** A zod object's properties as parameters; each one's description moves up to the parameter. */
function parametersOf(shape: z.ZodObject, location: 'query' | 'path'): Json[] {
  const object = inlineSchema(shape) as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(object.properties).map(([name, { description, ...schema }]) => ({
    name,
    in: location,
    ...(description ? { description } : {}),
    required: location === 'path' || (object.required ?? []).includes(name),
    schema,
  }));
}

function pathParametersOf(path: string, known: Schemas): Json[] {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) return [];
  const shape: Schemas = {};
  for (const name of names) {
    const schema = known[name];
    if (!schema)
      throw new Error(
        `Path parameter {${name}} of ${path} has no schema (pathParameters of schemas.ts or its endpoint)`,
      );
    shape[name] = schema;
  }
  return parametersOf(z.object(shape), 'path');
}

/** The endpoints' contributions, one map each; a name given twice is a mistake, not an override. */
function merged<T>(what: string, shared: Record<string, T>, parts: Record<string, T>[]): Record<string, T> {
  const out: Record<string, T> = { ...shared };
  for (const part of parts) {
    for (const [name, value] of Object.entries(part)) {
      if (name in out) throw new Error(`${what} ${name} is defined twice`);
      out[name] = value;
    }
  }
  return out;
}

const errorRef = (status: ErrorStatus) => ({ $ref: `#/components/responses/${ERRORS[status].name}` });

function responseObject(spec: ResponseSpec): Json {
  if (spec.examples && (!spec.schema || (spec.mediaType ?? 'application/json') !== 'application/json'))
    throw new Error(`Examples for an answer not given as JSON: ${spec.description}`);
  const examples = spec.examples ? { examples: spec.examples } : {};
  return {
    description: spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.schema
      ? {
          content: {
            [spec.mediaType ?? 'application/json']: { schema: componentRef(spec.schema), ...examples },
          },
        }
      : {}),
  };
}

function operationObject(spec: OperationSpec, auth: AuthMode, query: z.ZodObject | undefined): Json {
  const responses: Json = {};
  const statuses = [
    ...Object.keys(spec.responses).map(Number),
    ...(spec.errors ?? (auth === 'none' ? [] : ALL_ERRORS)),
  ].sort((a, b) => a - b);
  for (const status of statuses) {
    const success = spec.responses[status];
    responses[String(status)] = success ? responseObject(success) : errorRef(status as ErrorStatus);
  }
  const parameters = [
    ...(query ? parametersOf(query, 'query') : []),
    ...(spec.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    security: SECURITY[auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              Object.entries(spec.body).map(([mediaType, schema]) => {
                const examples = spec.bodyExamples?.[mediaType];
                return [mediaType, { schema: componentRef(schema), ...(examples ? { examples } : {}) }];
              }),
            ),
          },
        }
      : {}),
    responses,
  };
}

function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export type OpenApiDocument = Json & { openapi: string; paths: Record<string, Json> };

/**
 * Build the document from every endpoint's contract and the schema components of their documents
 * (functions/api/openapi.ts lists both). Deterministic:
 * the same code always gives the same JSON, key order included.
 */
export function assembleOpenApiDocument(
  endpoints: readonly EndpointContract[],
  documents: readonly EndpointDocument[],
): OpenApiDocument {
  const requestSchemaMap = merged<z.ZodType>(
    'Request schema',
    sharedRequestSchemas,
    documents.map((d) => d.requestSchemas),
  );
  const responseSchemaMap = merged<z.ZodType>(
    'Response schema',
    sharedResponseSchemas,
    documents.map((d) => d.responseSchemas),
  );
  const operationMap = merged(
    'Route',
    {},
    endpoints.map((e) =>
      Object.fromEntries(
        Object.entries(e.operations).map(([key, spec]) => [key, { spec, auth: e.auth, query: e.query?.() }]),
      ),
    ),
  );
  const parameterMap = merged<z.ZodType>(
    'Path parameter',
    sharedPathParameters,
    endpoints.map((e) => e.pathParameters),
  );
  const request = components(requestSchemaMap, 'input');
  const response = components(responseSchemaMap, 'output');
  for (const id of Object.keys(request)) {
    if (id in response) throw new Error(`Schema ${id} is both a request and a response component`);
  }

  const byPath = new Map<string, Map<Method, Json>>();
  for (const [key, { spec, auth, query }] of Object.entries(operationMap)) {
    for (const mediaType of Object.keys(spec.bodyExamples ?? {}))
      if (!spec.body?.[mediaType])
        throw new Error(`Examples for a ${mediaType} body that ${key} does not take`);
    const named = [...Object.values(spec.body ?? {}), ...Object.values(spec.responses).map((r) => r.schema)];
    for (const name of named) {
      if (name !== undefined && !(name in request) && !(name in response))
        throw new Error(`${key} names the schema ${name}, which no endpoint and not schemas.ts defines`);
    }
    const [method, path] = key.split(' ') as [string, string];
    const operations = byPath.get(path) ?? new Map<Method, Json>();
    operations.set(method.toLowerCase() as Method, operationObject(spec, auth, query));
    byPath.set(path, operations);
  }
  const paths: Record<string, Json> = {};
  for (const path of [...byPath.keys()].sort()) {
    const operations = byPath.get(path)!;
    const parameters = pathParametersOf(path, parameterMap);
    paths[path] = {
      ...(parameters.length > 0 ? { parameters } : {}),
      ...Object.fromEntries(METHOD_ORDER.filter((m) => operations.has(m)).map((m) => [m, operations.get(m)])),
    };
  }

  const document: OpenApiDocument = {
    openapi: OPENAPI_VERSION,
    ...DOCUMENT_HEAD,
    paths,
    webhooks: WEBHOOKS,
    components: {
      schemas: sortedByKey({ ...request, ...response }),
      ...COMMON_COMPONENTS,
    },
  };
  return document;
}

/** The committed form (docs/openapi.json): two-space indent, trailing newline. */
export const serializeOpenApi = (document: OpenApiDocument): string =>
  `${JSON.stringify(document, null, 2)}\n`;
