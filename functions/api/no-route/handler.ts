import { httpCorrelation, logger, observability } from '#aws/observability.ts';
import { MethodNotAllowedError, NotFoundError } from '#core/errors.ts';
import { bodilessHandler } from '#http/api-handler.ts';
import { routeTable } from '#http/routes.ts';
import { routeKeys } from '../route-table.ts';

/** The routes the API has, from the table they are made from, so that this answer never drifts from them. */
const table = routeTable(routeKeys);

/**
 * The `$default` route: every request no other route takes. An unknown path is 404; a known path asked with
 * another method is 405 with `Allow` naming the methods it takes. It reads no body, calls nothing and needs
 * no wiring, only its log.
 */
export const handler = bodilessHandler(
  { observe: () => observability(httpCorrelation), deps: () => ({ logger }) },
  async (event) => {
    const path = event.rawPath;
    const allow = table.methodsAt(path);
    if (allow.length === 0) throw new NotFoundError(`No route ${path}`);
    const method = event.requestContext.http.method.toUpperCase();
    throw new MethodNotAllowedError(`${method} is not allowed on ${path}; use ${allow.join(', ')}`, allow);
  },
);
