import middy, { type MiddlewareObj } from '@middy/core';
import type * as z from 'zod';
import { BadRequestError, NotFoundError } from '#core/errors.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { ParsedBody } from './body.ts';
import {
  type AuthMode,
  type BodilessStackDeps,
  type HttpContext,
  type HttpEvent,
  type HttpStackDeps,
  httpStack,
} from './http-stack.ts';
import type { HttpResult } from './responses.ts';

/**
 * What a handler takes from its endpoint's contract (openapi/contract.ts `EndpointContract` is one): who may
 * call it, its routes, the schemas of the path parameters only it has and the schema of its query.
 */
export interface HandlerContract {
  auth: AuthMode;
  opensGuestSession?: boolean;
  operations: Record<string, unknown>;
  pathParameters: Record<string, z.ZodType>;
  refusedPathStatus?: 400 | 404;
  /** Builds (once) the schema of its query; called at the first request, so importing builds none. */
  query?: (() => z.ZodType) | undefined;
}

/** `'job_id' | 'name'` of `'GET /results/{job_id}/{name}'`. */
type ParamNames<Route> = Route extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParamNames<Rest>
  : never;

/** The route's path parameters: parsed by the contract's schema where it has one, else as sent. */
export type PathOf<C extends HandlerContract> = {
  [Name in ParamNames<keyof C['operations']>]: Name extends keyof C['pathParameters']
    ? z.output<C['pathParameters'][Name]>
    : string;
};

/** The query as the contract's schema reads it; none for an endpoint that takes no query. */
export type QueryOf<C extends HandlerContract> = C['query'] extends (() => infer Schema extends z.ZodType)
  ? z.output<Schema>
  : Record<string, never>;

/** What a handler's function is handed: the request, its caller, and its parts as the contract reads them. */
export interface ApiRequest<C extends HandlerContract> {
  event: HttpEvent;
  /** Absent on public routes (`auth: 'none'`), which authenticate no one. */
  caller: C['auth'] extends 'none' ? undefined : Caller;
  path: PathOf<C>;
  query: QueryOf<C>;
  body: ParsedBody;
}

export interface ApiHandlerWiring<D extends HttpStackDeps> {
  /** The function's own middlewares, outermost (tracing, logging, metrics: layers/aws/observability.ts). */
  observe: () => MiddlewareObj<HttpEvent, HttpResult, Error, HttpContext>[];
  /** The function's dependencies, built once per cold start on first use. */
  deps: () => D;
}

/**
 * Binds the one handler shape to a function's observability and wiring (functions/api/api-handler.ts); the
 * `apiHandler` it returns makes an endpoint's handler from its contract and one function: the middy stack
 * (observability, then httpStack with the contract's auth), then `fn` with the path parameters and the
 * query parsed.
 */
export function apiHandlers<D extends HttpStackDeps>(wiring: ApiHandlerWiring<D>) {
  return function apiHandler<C extends HandlerContract>(
    contract: C,
    fn: (request: ApiRequest<C>) => Promise<HttpResult>,
  ) {
    return middy<HttpEvent, HttpResult, Error, HttpContext>()
      .use(wiring.observe())
      .use(
        httpStack({ auth: contract.auth, opensGuestSession: contract.opensGuestSession, deps: wiring.deps }),
      )
      .handler((event, context) =>
        fn({
          event,
          caller: context.caller as ApiRequest<C>['caller'],
          path: parsePath(contract, event.pathParameters ?? {}),
          query: parseQuery(contract, event.queryStringParameters ?? {}),
          body: context.body,
        }),
      );
  };
}

/**
 * The handler of a public answer that no body can change (the `$default` route's): no body read, nobody
 * authenticated, and only a log for what fails.
 */
export function bodilessHandler(
  wiring: { observe: ApiHandlerWiring<HttpStackDeps>['observe']; deps: () => BodilessStackDeps },
  fn: (event: HttpEvent) => Promise<HttpResult>,
) {
  return middy<HttpEvent, HttpResult, Error, HttpContext>()
    .use(wiring.observe())
    .use(httpStack({ auth: 'none', body: 'ignored', deps: wiring.deps }))
    .handler((event) => fn(event));
}

/** Every path parameter through its contract's schema; one it refuses is 404 (or the contract's status). */
function parsePath<C extends HandlerContract>(
  contract: C,
  raw: Record<string, string | undefined>,
): PathOf<C> {
  const path: Record<string, unknown> = { ...raw };
  for (const [name, schema] of Object.entries(contract.pathParameters)) {
    const parsed = schema.safeParse(raw[name]);
    if (parsed.success) {
      path[name] = parsed.data;
      continue;
    }
    const message = parsed.error.issues[0]!.message;
    throw contract.refusedPathStatus === 400 ? new BadRequestError(message) : new NotFoundError(message);
  }
  return path as PathOf<C>;
}

/** The query through its contract's schema; a value it refuses is 400 with the schema's message. */
function parseQuery<C extends HandlerContract>(
  contract: C,
  raw: Record<string, string | undefined>,
): QueryOf<C> {
  const schema = contract.query?.();
  if (!schema) return {} as QueryOf<C>;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new BadRequestError(parsed.error.issues[0]!.message);
  return parsed.data as QueryOf<C>;
}
