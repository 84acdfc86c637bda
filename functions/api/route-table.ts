/**
 * Every route of the service, made from the endpoints' contracts (endpoints.ts). Its exports are typed
 * without them, so that what reads only the routes (the CDK construct and its published declarations, the
 * `$default` route's function) does not take in every endpoint's schemas.
 */
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { ENDPOINTS } from './endpoints.ts';
import { contract as pages } from './get-page/schema.ts';

type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteEntry {
  method: RouteMethod;
  /** Full path including the `/api/v1` prefix, in API Gateway syntax (`{param}`, `{param+}`). */
  path: string;
  /** Repo-relative path of the Lambda entry file. */
  handler: string;
}

/** Every HTTP route of the service under `/api/v1`, served by its endpoint folder's handler.ts. */
export const routes: readonly RouteEntry[] = Object.entries(ENDPOINTS).flatMap(([folder, contract]) =>
  Object.keys(contract.operations).map((key) => {
    const [method, path] = key.split(' ') as [RouteMethod, string];
    return { method, path: `${API_PREFIX}${path}`, handler: `functions/api/${folder}/handler.ts` };
  }),
);

/** The web console and the API reference: static pages outside `/api/v1`, served by one function. */
export const pageHandler = 'functions/api/get-page/handler.ts';
export const pageRoutes: readonly RouteEntry[] = Object.keys(pages.operations).map((key) => {
  const [method, path] = key.split(' ') as [RouteMethod, string];
  return { method, path, handler: pageHandler };
});

/** HEAD wherever GET works (an HTTP API route matches one method only): the handler answers it as GET, bodiless. */
export const methodsOf = (route: RouteEntry): readonly string[] =>
  route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];

/** The HTTP API's route keys besides `$default`, as the deployed API has them. */
export const routeKeys: readonly string[] = [...routes, ...pageRoutes].flatMap((route) =>
  methodsOf(route).map((method) => `${method} ${route.path}`),
);
