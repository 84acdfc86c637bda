/**
 * The OpenAPI 3.1 document of the API, built from the endpoints' contracts: each
 * `functions/api/<endpoint>/schema.ts` gives its routes and the schemas only it uses (the run-time ones),
 * ./schemas.ts what several share, and this file what is not per endpoint: errors, limits, security,
 * webhooks and the generation. functions/api/openapi.ts lists the endpoints; the unit test fails when
 * their routes and the route table (lib/config.ts) disagree.
 */
import { z } from 'zod';
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { GUEST_COOKIE } from '#core/keys/guest-session.ts';
import {
  MAX_FIELD_BYTES,
  MAX_FIELD_NAME_BYTES,
  MAX_FORM_FIELDS,
  MAX_FORM_FILES,
  MAX_FORM_PARTS,
  MAX_HEADER_BYTES,
  MAX_ID_CHARS,
  MAX_IMAGE_ASPECT,
  MAX_IMAGE_FRAMES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  MAX_INLINE_BODY_BYTES,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_URL_BYTES,
  MIN_IMAGE_SIDE,
} from '#core/limits.ts';
import { DEFAULT_GUEST_RATE, DEFAULT_KEY_RATE } from '#core/rate-limit.ts';
import { WEBHOOK_EVENTS } from '#core/webhooks/delivery.ts';
import type { AuthMode } from '../http-stack.ts';
import { addExamples } from '../openapi-examples.ts';
import {
  idempotencyKey,
  type SharedSchemaName,
  sharedPathParameters,
  sharedRequestSchemas,
  sharedResponseSchemas,
} from '../schemas.ts';

export const OPENAPI_VERSION = '3.1.0';
/** Spec section 9: the interface description is version 1.1.0. */
export const API_VERSION = '1.1.0';

type Json = Record<string, unknown>;
type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
const METHOD_ORDER: readonly Method[] = ['get', 'put', 'post', 'patch', 'delete'];

// ---------------------------------------------------------------- limits (docs/security.md)

/** Every limit on what a client sends, with the status that refuses it; the message names the limit. */
const LIMITS = {
  'inline body': { value: MAX_INLINE_BODY_BYTES, unit: 'bytes', status: 413 },
  'URL length': { value: MAX_URL_BYTES, unit: 'bytes', status: 413 },
  'header size': { value: MAX_HEADER_BYTES, unit: 'bytes', status: 413 },
  'JSON body': { value: MAX_JSON_BODY_BYTES, unit: 'bytes', status: 413 },
  'JSON depth': { value: MAX_JSON_DEPTH, unit: 'levels', status: 400 },
  'form fields': { value: MAX_FORM_FIELDS, unit: 'fields', status: 413 },
  'form files': { value: MAX_FORM_FILES, unit: 'files', status: 413 },
  'form parts': { value: MAX_FORM_PARTS, unit: 'parts', status: 413 },
  'field size': { value: MAX_FIELD_BYTES, unit: 'bytes', status: 413 },
  'field name size': { value: MAX_FIELD_NAME_BYTES, unit: 'bytes', status: 413 },
  'id length': { value: MAX_ID_CHARS, unit: 'characters', status: 404 },
  pixels: { value: MAX_IMAGE_PIXELS, unit: 'pixels', status: 413 },
  'px a side': { value: MAX_IMAGE_SIDE, unit: 'pixels', status: 413 },
  'minimum side': { value: MIN_IMAGE_SIDE, unit: 'pixels', status: 400 },
  'aspect ratio': { value: MAX_IMAGE_ASPECT, unit: 'long side / short side', status: 400 },
  frames: { value: MAX_IMAGE_FRAMES, unit: 'frames', status: 415 },
  'requests per second (API key)': {
    value: DEFAULT_KEY_RATE.perSecond,
    burst: DEFAULT_KEY_RATE.burst,
    status: 429,
  },
  'requests in flight (API key)': { value: DEFAULT_KEY_RATE.inFlight, status: 429 },
  'requests per second (address without a key)': {
    value: DEFAULT_GUEST_RATE.perSecond,
    burst: DEFAULT_GUEST_RATE.burst,
    status: 429,
  },
  'requests in flight (address without a key)': { value: DEFAULT_GUEST_RATE.inFlight, status: 429 },
} as const;

// ---------------------------------------------------------------- errors (spec section 7)

const ERRORS = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid request: a field fails validation (empty form fields count as not sent), the source is ' +
      'missing or sent twice (`file`, `url`, `asset_id`), the `Idempotency-Key` is empty or longer than ' +
      '200 characters, or the image could not be downloaded from `url`. Also a field or file sent twice, a ' +
      'form part without a name, JSON nested deeper than 8 levels, and an image under 32 px a side or more ' +
      'than 16 times longer than wide (read from its header before anything is charged). The message names ' +
      'the field or the limit.',
  },
  401: {
    name: 'Unauthorized',
    description:
      'The API key is unknown or disabled (both answer the same, so keys cannot be probed), a key was sent ' +
      'where this server does not accept it (query string, form field), or the route needs an account key ' +
      'and none was sent. Authentication fails closed: an empty key, an `Authorization` header that is not ' +
      '`Bearer <key>`, or two different keys in one request are 401, never a guest request.',
  },
  402: {
    name: 'PaymentRequired',
    description:
      'Not enough credits to start the operation (5 per edit, 1 per analysis). Credits are reserved when ' +
      'the job is created and given back if it fails or is cancelled.',
  },
  404: {
    name: 'NotFound',
    description:
      'No such resource for this caller. Another owner’s job, file, asset, batch or delivery answers 404, ' +
      'never 403, so ids cannot be probed. An id of any length or spelling the service could not have ' +
      `issued (over ${MAX_ID_CHARS} characters, characters outside \`A-Za-z0-9_.-\`, broken percent-encoding) ` +
      'is 404 too, as is a route that does not exist.',
  },
  409: {
    name: 'Conflict',
    description:
      'The request conflicts with the state of the resource: an `Idempotency-Key` reused with a different ' +
      'body, or a move the job’s status does not allow (cancelling a finished job, retrying one that has not ' +
      'failed, redelivering the webhook of a job that is not finished or has no webhook URL).',
  },
  410: {
    name: 'Gone',
    description:
      'The asset named by `asset_id` has expired. Assets are kept 7 days; for 7 more days a reference ' +
      'answers 410, later 404.',
  },
  413: {
    name: 'PayloadTooLarge',
    description:
      `Too large; the message names the limit. A request body may be at most ${MAX_INLINE_BODY_BYTES.toLocaleString('en-US')} ` +
      'bytes (limit: inline body): Lambda takes an event of at most 6 MB, in which API Gateway carries a ' +
      'binary body base64-encoded, so (6 MiB − 64 KiB for the rest of the event) × 3/4; the local server ' +
      'reads the rest of a larger body before answering, so the client sees the 413. Larger photos go ' +
      'through POST /uploads (up to 40 MB) or `url` (up to 20 MB), archives through POST /uploads (up to ' +
      '2 GB). Also 413: an image over 64 megapixels, an image at `url` over 20 MB, a declared upload over ' +
      'its limit, an archive past a limit. The other limits (all listed under `x-limits`): URL 4,096 bytes, ' +
      'request line and headers 10,240 bytes, JSON body 65,536 bytes, 32 form fields, 2 files, 8,192 bytes ' +
      'a field, and images over 16,384 px a side, read from the image header before the job is stored or ' +
      'charged.',
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'Unsupported format. An image’s format is decided from its magic bytes (JPEG, PNG, WEBP), never from ' +
      'its name or Content-Type header; a body that is neither JSON nor a form is also 415, and so is an ' +
      'animated PNG or WEBP (limit: 1 frame).',
  },
  422: {
    name: 'UnprocessableContent',
    description:
      'The photo could not be processed; `code` says why: 800 the model could not classify the photo, ' +
      '802 the background mask could not be created, 803 no licence plate was detected. A job that fails ' +
      'this way carries the same code in `error.code`.',
  },
  429: {
    name: 'TooManyRequests',
    description:
      'Too many requests, with `Retry-After` (seconds): more than the request rate of one API key (100 a ' +
      'second, bursts of 200, 64 at once) or of one address without a key (10 a second, bursts of 20, 8 at ' +
      'once); too many jobs of one account queued or processing at once (20); or too many new guest ' +
      'sessions from one address in a day. The message names the limit.',
  },
  500: {
    name: 'InternalError',
    description:
      'Internal error. Internal details never reach the client; a missing model file is named in the message.',
  },
} as const;

type ErrorStatus = keyof typeof ERRORS;
const ALL_ERRORS = Object.keys(ERRORS).map(Number) as ErrorStatus[];

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
  tag: (typeof TAGS)[number]['name'];
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

const TAGS = [
  { name: 'Jobs', description: 'Processing and analysis jobs: create, poll, list, cancel, retry.' },
  { name: 'Results', description: 'Result files of finished jobs.' },
  { name: 'Assets', description: 'Reusable source images.' },
  { name: 'Files', description: 'The caller’s stored files.' },
  { name: 'Batches', description: 'ZIP archives processed as one batch.' },
  { name: 'Uploads', description: 'Direct uploads to storage, for files over the request size limit.' },
  { name: 'Legacy', description: 'Routes kept compatible for older clients.' },
  { name: 'Account', description: 'Credit balance and the key’s default webhook.' },
  {
    name: 'Webhooks',
    description:
      'The delivery log of a job’s webhook, and redelivery. See docs/webhooks.md for verification.',
  },
  { name: 'Meta', description: 'This document.' },
] as const;

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

// ---------------------------------------------------------------- security (spec section 5)

const SECURITY_SCHEMES = {
  ApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'An API key, created in the account area; it may store defaults (background, plate colour, ' +
      'smoothing, `plate_mask_only`, webhook). The master key, configured on the server, passes without ' +
      'deducting credits and is for backend use only. A key in the query string or in the legacy form ' +
      'field `api_key` is refused unless the operator enables it.',
  },
  Bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The same API key as `Authorization: Bearer <API_KEY>`.',
  },
  GuestSession: {
    type: 'apiKey',
    in: 'cookie',
    name: GUEST_COOKIE,
    description:
      'Without a key, a request runs against the guest trial balance of its session. The first keyless ' +
      'request opens a session with trial credits and sets this signed cookie (30 days); send it back to ' +
      'stay on that session. /assets, /batches, /files and /webhook need an account key.',
  },
} as const;

const SECURITY: Record<AuthMode, Json[]> = {
  'key-or-guest': [{ ApiKeyHeader: [] }, { Bearer: [] }, { GuestSession: [] }],
  key: [{ ApiKeyHeader: [] }, { Bearer: [] }],
  none: [],
};

// ---------------------------------------------------------------- generation

/** Drop what zod adds that says nothing here: closed objects (clients must accept new fields) and ±2^53 bounds. */
function tidy({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodTypes; jsonSchema: Json }): void {
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

const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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

function inlineSchema(schema: z.ZodType): Json {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    override: tidy,
  }) as Json;
  return rest;
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
    info: {
      title: 'Photo Processing Jobs API',
      version: API_VERSION,
      summary:
        'Asynchronous processing of car photos: plate hiding, background replacement, masks, analysis.',
      description:
        'Every operation is a job: creation returns its id at once, and the final state is read by polling ' +
        '`GET /jobs/{job_id}` or delivered to a webhook. Work is paid in credits: 5 for a successful edit, ' +
        '1 for an analysis. Requests without a key run against a guest trial balance. Bodies are JSON ' +
        'unless stated; uploads are `multipart/form-data`. Result paths in responses are relative to the ' +
        'service address.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: API_PREFIX, description: 'Relative to the service address.' }],
    'x-limits': LIMITS,
    tags: [...TAGS],
    paths,
    webhooks: {
      jobFinished: {
        post: {
          operationId: 'jobFinished',
          summary: 'A job finished',
          description:
            'Sent to the job’s `webhook_url`, or else the key’s default webhook, when the job finishes, with the ' +
            'final job: the same JSON as polling. A 2xx answer within 10 s delivers it; anything else (another ' +
            'status, a redirect, a timeout) is retried 7 times over about 11 hours with exponential backoff ' +
            'and jitter. Verify `X-Service-Signature` before trusting the body: see docs/webhooks.md.',
          parameters: [
            header('X-Service-Job', 'The job id.'),
            header('X-Service-Event', 'The event: `job.succeeded`, `job.failed` or `job.cancelled`.', [
              ...WEBHOOK_EVENTS,
            ]),
            header(
              'X-Service-Delivery',
              'Id of this delivery; the same on each retry of it, so duplicates can be dropped.',
            ),
            header('X-Service-Attempt', 'Attempt number within the delivery, from 1.'),
            {
              ...header(
                'X-Service-Signature',
                '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the key’s webhook secret>`; a ' +
                  'second `v1` while a rotated secret overlaps. Refuse a `t` older than 5 minutes. Absent for ' +
                  'jobs of the master key and of guest sessions, which have no secret.',
              ),
              required: false,
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: componentRef('JobEnvelope') } },
          },
          responses: {
            '2XX': { description: 'Delivered.' },
            default: { description: 'Not delivered; retried on the schedule.' },
          },
        },
      },
      batchFinished: {
        post: {
          operationId: 'batchFinished',
          summary: 'A batch finished',
          description:
            'Sent to the key’s default webhook (as it was when the batch was created) when the batch completes, ' +
            'or when a cancelled batch’s last running photo has ended, with what GET /batches/{batch_id} ' +
            'answers then. Signed like the job webhook. One attempt only for now: no retry schedule and no ' +
            'delivery log yet (docs/decisions.md, Batches). Item jobs send no webhook of their own.',
          parameters: [
            header('X-Service-Batch', 'The batch id.'),
            header('X-Service-Event', 'The event.', ['batch.completed', 'batch.cancelled']),
            header('X-Service-Delivery', 'Id of this delivery; the same for the same final state.'),
            header('X-Service-Attempt', 'Always 1.'),
            { ...header('X-Service-Signature', 'As for the job webhook.'), required: false },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: componentRef('BatchEnvelope') } },
          },
          responses: { '2XX': { description: 'Delivered.' }, default: { description: 'Not delivered.' } },
        },
      },
    },
    components: {
      schemas: sortedByKey({ ...request, ...response }),
      responses: Object.fromEntries(
        ALL_ERRORS.map((status) => [
          ERRORS[status].name,
          {
            description: ERRORS[status].description,
            ...(status === 429
              ? {
                  headers: {
                    'Retry-After': {
                      description: 'Seconds to wait before trying again.',
                      schema: { type: 'integer', minimum: 1 },
                    },
                  },
                }
              : {}),
            content: { 'application/json': { schema: componentRef('ErrorBody') } },
          },
        ]),
      ),
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          ...describedSchema(idempotencyKey),
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
  addExamples(document);
  return document;
}

function header(name: string, description: string, values?: string[]): Json {
  return {
    name,
    in: 'header',
    required: true,
    description,
    schema: values ? { type: 'string', enum: values } : { type: 'string' },
  };
}

function describedSchema(schema: z.ZodType): Json {
  const { description, ...rest } = inlineSchema(schema);
  return { ...(description ? { description } : {}), schema: rest };
}

/** The committed form (docs/openapi.json): two-space indent, trailing newline. */
export const serializeOpenApi = (document: OpenApiDocument): string =>
  `${JSON.stringify(document, null, 2)}\n`;
