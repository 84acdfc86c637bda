/**
 * How an endpoint states itself: its `functions/api/<endpoint>/schema.ts` exports one `contract`, the only
 * place its routes (method and path), who may call them, its path parameters, its request and response
 * schemas and their examples are written. Its handler is made from it (../api-handler.ts: auth, path
 * parameters and query), ../../functions/api/route-table.ts makes the route table (and so the API Gateway routes)
 * from it, and ./generator.ts the OpenAPI document. Light on purpose: handlers import it, so it pulls in
 * no generator.
 */
import type * as z from 'zod';
import type { AuthMode } from '../http-stack.ts';
import type { SharedSchemaName } from '../schemas/shared.ts';
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
  Req extends Schemas = Schemas,
  Res extends Schemas = Schemas,
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
  /** Request bodies, read as their input type, by component name. */
  requestSchemas: Req;
  /** Response bodies, read as their output type, by component name. */
  responseSchemas: Res;
  /** Path parameters only this endpoint's routes have, by name: its handler gets them parsed by these. */
  pathParameters: Path;
  /**
   * The query of its routes, as the run-time schema: its handler gets the query parsed by it (a value it
   * refuses is 400 with the schema's message, which names the parameter), and the document lists its fields.
   */
  query: Query;
  /**
   * The answer to a path parameter its schema refuses: 404 (the default), since such a path names nothing,
   * or 400 where the spec calls the value a bad request.
   */
  refusedPathStatus?: 400 | 404;
}

/** An endpoint's contract; its routes may name only its own components and the shared ones. */
export function endpointContract<
  Route extends RouteKey,
  Auth extends AuthMode,
  Req extends Schemas = Record<never, never>,
  Res extends Schemas = Record<never, never>,
  Path extends Schemas = Record<never, never>,
  Query extends z.ZodObject | undefined = undefined,
>(contract: {
  auth: Auth;
  opensGuestSession?: boolean;
  requestSchemas?: Req;
  responseSchemas?: Res;
  pathParameters?: Path;
  query?: Query;
  refusedPathStatus?: 400 | 404;
  operations: Record<
    Route,
    OperationSpec<SharedSchemaName | Extract<keyof NoInfer<Req> | keyof NoInfer<Res>, string>>
  >;
}): EndpointContract<Req, Res, Route, Path, Auth, Query> {
  return {
    ...contract,
    requestSchemas: contract.requestSchemas ?? ({} as Req),
    responseSchemas: contract.responseSchemas ?? ({} as Res),
    pathParameters: contract.pathParameters ?? ({} as Path),
    query: contract.query as Query,
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
