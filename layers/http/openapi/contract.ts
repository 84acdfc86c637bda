/**
 * How an endpoint states itself: its `functions/api/<endpoint>/schema.ts` exports one `contract`, the only
 * place its routes (method and path), who may call them, its path parameters, its query and its examples
 * are written; `document.ts` beside it, where it has one, exports the request and response schemas its
 * routes name. Its handler is made from the contract (../api-handler.ts: auth, path parameters and query),
 * ../../functions/api/route-table.ts makes the route table (and so the API Gateway routes) from it, and
 * ./generator.ts the OpenAPI document from both. Light on purpose: handlers import the contract, so it
 * pulls in no generator, and no schema that only the document needs (building zod schemas is most of
 * what a cold start spends on them: docs/decisions/0058-what-a-zip-function-loads-at-init.md); its query's
 * schema is built at the first request that reads it.
 */
import type * as z from 'zod';
import { builtOnFirstUse } from '#core/built-on-first-use.ts';
import type { AuthMode } from '../http-stack.ts';
import type { TagName } from './document.ts';
import type { ErrorStatus } from './errors.ts';
import type { Examples } from './examples.ts';
import type { Json } from './json-schema.ts';

export { type Examples, example } from './examples.ts';

/** A response of a route; `Name` is a schema component of the endpoint or of ../schemas/shared.ts. */
export interface ResponseSpec<Name extends string = string> {
  description: string;
  /** A schema component; omitted for a response without a body. */
  schema?: Name;
  mediaType?: string;
  headers?: Record<string, Json>;
  /** What the answer looks like (JSON answers only). */
  examples?: Examples;
}

/** A route's entry in the document. */
export interface OperationSpec<Name extends string = string> {
  operationId: string;
  summary: string;
  description?: string;
  tag: TagName;
  /** Takes an `Idempotency-Key` header. */
  idempotent?: boolean;
  /** Media type → request component. */
  body?: Record<string, Name>;
  /** Media type (one of `body`'s) → what such a request looks like. */
  bodyExamples?: Record<string, Examples>;
  responses: Record<number, ResponseSpec<Name>>;
  /** Defaults to every status of section 7 on authenticated routes. */
  errors?: readonly ErrorStatus[];
}

type Schemas = Record<string, z.ZodType>;

/** A route: `METHOD path`, the path without the `/api/v1` prefix, in API Gateway syntax (`{param}`). */
export type RouteKey = `${'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE'} /${string}`;

/** What one endpoint states; `Route` is `METHOD path`, the path without the `/api/v1` prefix. */
export interface EndpointContract<
  Route extends RouteKey = RouteKey,
  Path extends Schemas = Schemas,
  Auth extends AuthMode = AuthMode,
  Query extends z.ZodObject | undefined = z.ZodObject | undefined,
> {
  /** Who may call every route of the endpoint: its handler's httpStack enforces it, the document shows it. */
  auth: Auth;
  /** Whether a request without key or session opens a guest session (job creation only, spec 5.4). */
  opensGuestSession?: boolean;
  operations: Record<Route, OperationSpec>;
  /** Path parameters only this endpoint's routes have, by name: its handler gets them parsed by these. */
  pathParameters: Path;
  /**
   * The query of its routes, as the run-time schema: its handler gets the query parsed by it (a value it
   * refuses is 400 with the schema's message, which names the parameter), and the document lists its fields.
   * Built at its first call and kept, so that importing the contract builds no schema.
   */
  query: Query extends z.ZodObject ? () => Query : undefined;
  /**
   * The answer to a path parameter its schema refuses: 404 (the default), since such a path names nothing,
   * or 400 where the spec calls the value a bad request.
   */
  refusedPathStatus?: 400 | 404;
}

/**
 * An endpoint's contract. Its routes name schema components of its document.ts or the shared ones; the
 * generator refuses a name that neither defines (test/unit/http/openapi.test.ts builds the document).
 */
export function endpointContract<
  Route extends RouteKey,
  Auth extends AuthMode,
  Path extends Schemas = Record<never, never>,
  Query extends z.ZodObject | undefined = undefined,
>(contract: {
  auth: Auth;
  opensGuestSession?: boolean;
  pathParameters?: Path;
  /** Builds the query's schema (the run-time one, described): called at its first use, once. */
  query?: () => Query;
  refusedPathStatus?: 400 | 404;
  operations: Record<Route, OperationSpec>;
}): EndpointContract<Route, Path, Auth, Query> {
  return {
    ...contract,
    pathParameters: contract.pathParameters ?? ({} as Path),
    query: (contract.query && builtOnFirstUse(contract.query)) as EndpointContract<
      Route,
      Path,
      Auth,
      Query
    >['query'],
  };
}

/** The schema components of an endpoint's routes, only for the document (its `document.ts`). */
export interface EndpointDocument<Req extends Schemas = Schemas, Res extends Schemas = Schemas> {
  /** Request bodies, read as their input type, by component name. */
  requestSchemas: Req;
  /** Response bodies, read as their output type, by component name. */
  responseSchemas: Res;
}

export function endpointDocument<
  Req extends Schemas = Record<never, never>,
  Res extends Schemas = Record<never, never>,
>(document: { requestSchemas?: Req; responseSchemas?: Res }): EndpointDocument<Req, Res> {
  return {
    requestSchemas: document.requestSchemas ?? ({} as Req),
    responseSchemas: document.responseSchemas ?? ({} as Res),
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
