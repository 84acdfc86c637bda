/**
 * How an HTTP API picks a route for a request: a `{param}` matches one path segment, a `{param+}` the rest
 * of the path, and the route with the most literal segments wins. The local gateway routes with it, and
 * the `$default` route's function tells an unknown path from a known one asked with another method.
 */
interface CompiledRoute {
  routeKey: string;
  method: string;
  pattern: RegExp;
  params: string[];
  literalSegments: number;
}

function compile(routeKey: string): CompiledRoute {
  const [method, path] = routeKey.split(' ') as [string, string];
  const params: string[] = [];
  const segments = path.split('/').filter(Boolean);
  const source = segments
    .map((segment) => {
      const param = segment.match(/^\{(.+?)(\+)?\}$/);
      if (!param) return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
      params.push(param[1]!);
      return param[2] ? '/(.+)' : '/([^/]+)';
    })
    .join('');
  return {
    routeKey,
    method,
    pattern: new RegExp(`^${source}/?$`),
    params,
    literalSegments: segments.filter((segment) => !segment.startsWith('{')).length,
  };
}

interface RouteMatch {
  routeKey: string;
  /** Named as the route names them, still percent-encoded as the request sent them. */
  rawParameters: Record<string, string>;
}

export interface RouteTable {
  /** The route that serves `method` on `path`; null when none does. */
  match(method: string, path: string): RouteMatch | null;
  /** The methods routes take on `path`, each once; empty when no route has the path. */
  methodsAt(path: string): string[];
}

/** `routeKeys`: `METHOD /path` as the HTTP API's routes name them (`ANY` for every method; no `$default`). */
export function routeTable(routeKeys: readonly string[]): RouteTable {
  const compiled = routeKeys.map(compile).sort((a, b) => b.literalSegments - a.literalSegments);
  const at = (path: string) => compiled.filter((route) => route.pattern.test(path));
  return {
    match(method, path) {
      const route = at(path).find((candidate) => candidate.method === method || candidate.method === 'ANY');
      if (!route) return null;
      const values = path.match(route.pattern)!.slice(1);
      return {
        routeKey: route.routeKey,
        rawParameters: Object.fromEntries(route.params.map((name, i) => [name, values[i]!])),
      };
    },
    methodsAt: (path) => [...new Set(at(path).map((route) => route.method))],
  };
}
