import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** API Gateway refuses larger requests before any Lambda runs (Lambda's 6 MB invoke payload). */
export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;

export interface LocalRoute {
  routeKey: string;
  invoke(event: APIGatewayProxyEventV2): Promise<unknown>;
}

interface CompiledRoute extends LocalRoute {
  method: string;
  pattern: RegExp;
  params: string[];
  literalSegments: number;
}

function compile(route: LocalRoute): CompiledRoute {
  const [method, path] = route.routeKey.split(' ') as [string, string];
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
    ...route,
    method,
    pattern: new RegExp(`^${source}/?$`),
    params,
    literalSegments: segments.filter((segment) => !segment.startsWith('{')).length,
  };
}

const TEXT_TYPES = /^(text\/|application\/(json|.+\+json|x-www-form-urlencoded|xml|javascript))/i;

/**
 * A node:http listener that behaves like an HTTP API (payload format 2.0) in front of Lambda:
 * route matching with the most specific route first, path parameters, cookies, base64 bodies
 * for binary content, and the 2.0 response mapping.
 */
export function apiGatewayListener(routes: LocalRoute[]) {
  const compiled = routes.map(compile).sort((a, b) => b.literalSegments - a.literalSegments);

  return async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    const candidates = compiled.filter((route) => route.pattern.test(url.pathname));
    const route = candidates.find((candidate) => candidate.method === method || candidate.method === 'ANY');
    if (!route) {
      return send(res, candidates.length > 0 ? 405 : 404, {
        message: candidates.length ? 'Method Not Allowed' : 'Not Found',
      });
    }
    const body = await readBody(req);
    if (body === null) {
      return send(res, 413, {
        code: 413,
        message: `The request is larger than ${MAX_REQUEST_BYTES} bytes`,
        result: false,
      });
    }
    const match = url.pathname.match(route.pattern)!;
    const event = toEvent(req, url, route, match, body);
    try {
      writeResult(res, await route.invoke(event));
    } catch (error) {
      // What API Gateway answers when the function itself crashes.
      console.error(`[api] ${route.routeKey} crashed:`, error);
      send(res, 500, { message: 'Internal Server Error' });
    }
  };
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  route: CompiledRoute,
  match: RegExpMatchArray,
  body: Buffer,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie')
      headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    query[name] = name in query ? `${query[name]},${value}` : value;
  const pathParameters = Object.fromEntries(
    route.params.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]),
  );
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  const cookies = req.headers.cookie
    ?.split(';')
    .map((cookie) => cookie.trim())
    .filter(Boolean);
  return {
    version: '2.0',
    routeKey: route.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies?.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(route.params.length ? { pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !isText,
  };
}

function writeResult(res: ServerResponse, result: unknown) {
  // Payload 2.0: anything that is not a structured response is sent as a JSON 200.
  if (typeof result !== 'object' || result === null || !('statusCode' in result)) {
    return send(res, 200, result ?? null);
  }
  const structured = result as APIGatewayProxyStructuredResultV2;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name] = String(value);
  if (structured.cookies?.length) headers['set-cookie'] = structured.cookies;
  const body = structured.body
    ? Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8')
    : undefined;
  res.writeHead(structured.statusCode ?? 200, headers);
  res.end(body);
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
