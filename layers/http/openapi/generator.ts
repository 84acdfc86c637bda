/**
 * The OpenAPI 3.1 document of the API, built from the endpoints' contracts: each
 * `functions/api/<endpoint>/schema.ts` gives its routes and the schemas only it uses (the run-time ones),
 * ../schemas.ts what several share, ./document.ts what is not per endpoint (errors, limits, security,
 * webhooks), and this file the generation. functions/api/openapi.ts lists the endpoints; the unit test
 * fails when their routes and the route table (lib/config.ts) disagree.
 */
import { z } from 'zod';
import type { AuthMode } from '../http-stack.ts';
import { addExamples } from '../openapi-examples.ts';
import {
  type SharedSchemaName,
  sharedPathParameters,
  sharedRequestSchemas,
  sharedResponseSchemas,
} from '../schemas.ts';
import {
  ALL_ERRORS,
  COMMON_COMPONENTS,
  DOCUMENT_HEAD,
  ERRORS,
  type ErrorStatus,
  OPENAPI_VERSION,
  SECURITY,
  type TagName,
  WEBHOOKS,
} from './document.ts';
import { componentRef, inlineSchema, type Json, tidy } from './json-schema.ts';

export { API_VERSION, OPENAPI_VERSION } from './document.ts';

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
const METHOD_ORDER: readonly Method[] = ['get', 'put', 'post', 'patch', 'delete'];

// ---------------------------------------------------------------- operations

/** A response of a route; `Name` is a schema component of the endpoint or of ./schemas.ts. */
export interface ResponseSpec<Name extends string = string> {
  description: string;
  /** A schema component; omitted for a response without a body. */
  schema?: Name;
  mediaType?: string;
  headers?: Record<string, Json>;
}

/** A route's entry in the document. */
export interface OperationSpec<Name extends string = string> {
  operationId: string;
  summary: string;
  description?: string;
  tag: TagName;
  /** The `auth` the route's handler gives httpStack. */
  auth: AuthMode;
  /** The run-time schema its query is parsed with. */
  query?: z.ZodObject;
  /** Takes an `Idempotency-Key` header. */
  idempotent?: boolean;
  /** Media type → request component. */
  body?: Record<string, Name>;
  bodyDescription?: string;
  responses: Record<number, ResponseSpec<Name>>;
  /** Defaults to every status of section 7 on authenticated routes. */
  errors?: readonly ErrorStatus[];
}

type Schemas = Record<string, z.ZodType>;

/**
 * What one endpoint (`functions/api/<endpoint>/schema.ts`) puts into the document: its routes, keyed
 * `METHOD path` as in lib/config.ts without the `/api/v1` prefix, and the schema components only it uses.
 * What several endpoints share is in ./schemas.ts.
 */
export interface EndpointContract<Req extends Schemas = Schemas, Res extends Schemas = Schemas> {
  operations: Record<string, OperationSpec>;
  /** Request bodies, read as their input type, by component name. */
  requestSchemas: Req;
  /** Response bodies, read as their output type, by component name. */
  responseSchemas: Res;
  /** Path parameters only this endpoint's routes have, by name. */
  pathParameters: Schemas;
}

/** An endpoint's contract; its routes may name only its own components and the shared ones. */
export function endpointContract<
  Req extends Schemas = Record<never, never>,
  Res extends Schemas = Record<never, never>,
>(contract: {
  requestSchemas?: Req;
  responseSchemas?: Res;
  pathParameters?: Schemas;
  operations: Record<
    string,
    OperationSpec<SharedSchemaName | Extract<keyof NoInfer<Req> | keyof NoInfer<Res>, string>>
  >;
}): EndpointContract<Req, Res> {
  return {
    operations: contract.operations,
    requestSchemas: contract.requestSchemas ?? ({} as Req),
    responseSchemas: contract.responseSchemas ?? ({} as Res),
    pathParameters: contract.pathParameters ?? {},
  };
}

/** A JSON answer with the schema component `schema`. */
export const json = <Name extends string>(
  schema: Name,
  description: string,
  extra: Partial<ResponseSpec<Name>> = {},
): ResponseSpec<Name> => ({ description, schema, ...extra });
export const location = (description: string) => ({
  Location: { description, schema: { type: 'string' } },
});
/** The body of job creation, shared by POST /jobs and POST /assets. */
export const JOB_BODY = { 'application/json': 'JobInput', 'multipart/form-data': 'JobInputForm' } as const;

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
  return {
    description: spec.description,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.schema
      ? { content: { [spec.mediaType ?? 'application/json']: { schema: componentRef(spec.schema) } } }
      : {}),
  };
}

function operationObject(spec: OperationSpec): Json {
  const responses: Json = {};
  const statuses = [
    ...Object.keys(spec.responses).map(Number),
    ...(spec.errors ?? (spec.auth === 'none' ? [] : ALL_ERRORS)),
  ].sort((a, b) => a - b);
  for (const status of statuses) {
    const success = spec.responses[status];
    responses[String(status)] = success ? responseObject(success) : errorRef(status as ErrorStatus);
  }
  const parameters = [
    ...(spec.query ? parametersOf(spec.query, 'query') : []),
    ...(spec.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    security: SECURITY[spec.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              Object.entries(spec.body).map(([mediaType, schema]) => [
                mediaType,
                { schema: componentRef(schema) },
              ]),
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
 * Build the document from every endpoint's contract (functions/api/openapi.ts lists them). Deterministic:
 * the same code always gives the same JSON, key order included.
 */
export function assembleOpenApiDocument(endpoints: readonly EndpointContract[]): OpenApiDocument {
  const requestSchemaMap = merged<z.ZodType>(
    'Request schema',
    sharedRequestSchemas,
    endpoints.map((e) => e.requestSchemas),
  );
  const responseSchemaMap = merged<z.ZodType>(
    'Response schema',
    sharedResponseSchemas,
    endpoints.map((e) => e.responseSchemas),
  );
  const operationMap = merged(
    'Route',
    {},
    endpoints.map((e) => e.operations),
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
  for (const [key, spec] of Object.entries(operationMap)) {
    const named = [...Object.values(spec.body ?? {}), ...Object.values(spec.responses).map((r) => r.schema)];
    for (const name of named) {
      if (name !== undefined && !(name in request) && !(name in response))
        throw new Error(`${key} names the schema ${name}, which no endpoint and not schemas.ts defines`);
    }
    const [method, path] = key.split(' ') as [string, string];
    const operations = byPath.get(path) ?? new Map<Method, Json>();
    operations.set(method.toLowerCase() as Method, operationObject(spec));
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
  addExamples(document);
  return document;
}

/** The committed form (docs/openapi.json): two-space indent, trailing newline. */
export const serializeOpenApi = (document: OpenApiDocument): string =>
  `${JSON.stringify(document, null, 2)}\n`;
