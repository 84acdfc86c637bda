import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  API_GATEWAY_PAYLOAD_BYTES,
  INTEGRATION_TIMEOUT_SECONDS,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
  MAX_DRAINED_BODY_BYTES,
  MAX_HEADER_BYTES,
  MAX_URL_BYTES,
} from '#core/limits/request.ts';
import { type RouteTable, routeTable } from '#http/routes.ts';
import { type StageThrottle, stageThrottle } from './stage-throttle.ts';

const INTEGRATION_TIMEOUT_MS = INTEGRATION_TIMEOUT_SECONDS * 1000;

/** The route every request no other route takes; without one API Gateway answers 404 itself. */
const DEFAULT_ROUTE = '$default';

export interface LocalRoute {
  /** `METHOD /path`, or `$default`. */
  routeKey: string;
  invoke(event: APIGatewayProxyEventV2): Promise<unknown>;
  /** How long API Gateway waits for the integration; default INTEGRATION_TIMEOUT_MS. */
  timeoutMs?: number;
}

const TEXT_TYPES = /^(text\/|application\/(json|.+\+json|x-www-form-urlencoded|xml|javascript))/i;

const errorBody = (code: number, message: string) => ({ code, message, result: false });

/**
 * What API Gateway answers itself, in its own shape rather than the spec's: a client of a deployment gets
 * these, so the local gateway answers them word for word.
 */
const apiGatewayAnswers = {
  /** No route matches and the API has no `$default` route. */
  notFound: [404, 'Not Found'],
  /** Over the 10 MB payload quota, or an event over Lambda's 6 MB invoke payload. */
  tooLarge: [413, 'Request Entity Too Large'],
  /** The function failed, timed out, or answered something that is no response. */
  internal: [500, 'Internal Server Error'],
  /** The integration did not answer within its timeout (30 s at most). */
  timeout: [503, 'Service Unavailable'],
  /** The stage is over its throttle, shared by every client. */
  throttled: [429, 'Too Many Requests'],
} as const;

function answerAsApiGateway(res: ServerResponse, answer: keyof typeof apiGatewayAnswers) {
  const [status, message] = apiGatewayAnswers[answer];
  send(res, status, { message });
}

/**
 * A node:http server that behaves like an HTTP API (payload format 2.0) in front of Lambda, and that no
 * client can stop: every path through it ends in a response (API Gateway's own answers in its shape, the
 * rest from the functions), a refusal is sent only once the request's body has been read (so the client
 * sees it, not a broken pipe, and the connection stays usable), and nothing a request does can throw out of
 * the listener.
 */
export function createApiServer(routes: LocalRoute[], options: GatewayOptions = {}): http.Server {
  const listener = apiGatewayListener(routes, options);
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, listener);
  // Kept-alive connections stay open as long as a load balancer's would, so a busy client (and a loaded
  // machine) does not race the server's close between two requests.
  server.keepAliveTimeout = 65_000;
  // A request announcing a body we would refuse is refused before the client sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (declaredLength(req) > API_GATEWAY_PAYLOAD_BYTES) {
      res.shouldKeepAlive = false;
      answerAsApiGateway(res, 'tooLarge');
      return;
    }
    res.writeContinue();
    listener(req, res);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const [status, reason, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            413,
            'Payload Too Large',
            `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes (limit: header size)`,
          ]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT'
          ? [408, 'Request Timeout', 'The request was not received in time']
          : [400, 'Bad Request', 'The request is not valid HTTP'];
    const body = JSON.stringify(errorBody(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

export interface GatewayOptions {
  /** The stage's default route throttle (the template's `DefaultRouteSettings`); absent: none. */
  throttle?: StageThrottle | null;
  /** The API's CORS configuration (the template's `CorsConfiguration`); absent: no CORS. */
  cors?: CorsConfiguration | null;
}

/** An HTTP API's `CorsConfiguration`, as CloudFormation spells it. */
export interface CorsConfiguration {
  AllowOrigins?: string[];
  AllowMethods?: string[];
  AllowHeaders?: string[];
  ExposeHeaders?: string[];
  MaxAge?: number;
}

/**
 * CORS as an HTTP API with a CORS configuration does it: it answers a preflight (`OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`) itself, with no route and no integration, and it adds the configured
 * headers to every response to a request from an allowed origin. Returns true when it answered.
 */
function applyCors(cors: CorsConfiguration, req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  const origins = cors.AllowOrigins ?? [];
  if (!origin || !(origins.includes('*') || origins.includes(origin))) return false;
  res.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
  const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (!preflight) {
    if (cors.ExposeHeaders?.length)
      res.setHeader('access-control-expose-headers', cors.ExposeHeaders.join(','));
    return false;
  }
  if (cors.AllowMethods?.length) res.setHeader('access-control-allow-methods', cors.AllowMethods.join(','));
  if (cors.AllowHeaders?.length) res.setHeader('access-control-allow-headers', cors.AllowHeaders.join(','));
  if (cors.MaxAge !== undefined) res.setHeader('access-control-max-age', String(cors.MaxAge));
  req.resume();
  res.writeHead(204).end();
  return true;
}

/** The request listener alone (createApiServer adds the parts that live on the server). */
function apiGatewayListener(routes: LocalRoute[], options: GatewayOptions = {}) {
  const byKey = new Map(routes.map((route) => [route.routeKey, route]));
  const table = routeTable(routes.map((route) => route.routeKey).filter((key) => key !== DEFAULT_ROUTE));
  const stage = options.throttle ? stageThrottle(options.throttle) : null;
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (options.cors && applyCors(options.cors, req, res)) return;
    // API Gateway's own answer, in its shape: the stage is shared, so this is not a client's own limit
    // (that is the functions', in the spec's error body: layers/core/use-cases/admit-request.ts).
    if (stage && !stage.admit()) {
      afterBody(req, res, () => answerAsApiGateway(res, 'throttled'));
      return;
    }
    handle(table, byKey, req, res).catch((error: unknown) => {
      console.error('[api] request failed in the gateway:', error);
      if (!res.headersSent) answerAsApiGateway(res, 'internal');
      else res.destroy();
    });
  };
}

async function handle(
  table: RouteTable,
  routes: Map<string, LocalRoute>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const target = req.url ?? '/';
  if (Buffer.byteLength(target) > MAX_URL_BYTES) {
    return refuse(
      req,
      res,
      413,
      `The path and query are longer than ${MAX_URL_BYTES} bytes (limit: URL length)`,
    );
  }
  let url: URL;
  try {
    url = new URL(target, 'http://localhost');
  } catch {
    return refuse(req, res, 400, 'The request target is not a valid path');
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const body = await readBody(req, res);
  if (body === 'too-large') return answerAsApiGateway(res, 'tooLarge');
  if (body === 'aborted') return;
  const match = table.match(method, url.pathname);
  const route = match ? routes.get(match.routeKey)! : routes.get(DEFAULT_ROUTE);
  if (!route) return answerAsApiGateway(res, 'notFound');
  const rawParameters = match?.rawParameters ?? {};
  const pathParameters = Object.fromEntries(
    Object.entries(rawParameters).map(([name, value]) => [name, safeDecode(value)]),
  );
  // A parameter that is not valid percent-encoding names no resource.
  if (Object.values(pathParameters).some((value) => value === null))
    return send(res, 404, errorBody(404, 'Not found'));
  const event = toEvent(req, url, route.routeKey, pathParameters as Record<string, string>, body);
  // Lambda refuses an invoke payload over 6 MB, and API Gateway answers the refusal as too large.
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_INVOKE_PAYLOAD_BYTES)
    return answerAsApiGateway(res, 'tooLarge');
  const outcome = await invokeWithin(route, event);
  if (outcome.kind === 'timeout') {
    console.error(`[api] ${route.routeKey} did not answer within ${outcome.ms} ms`);
    return answerAsApiGateway(res, 'timeout');
  }
  if (outcome.kind === 'failed') {
    console.error(`[api] ${route.routeKey} failed:`, outcome.error);
    return answerAsApiGateway(res, 'internal');
  }
  // Lambda refuses a synchronous response over 6 MB (Function.ResponseSizeTooLarge), and API Gateway
  // answers that failed invocation with a 500.
  const resultBytes = Buffer.byteLength(JSON.stringify(outcome.result ?? null));
  if (resultBytes > LAMBDA_INVOKE_PAYLOAD_BYTES) {
    console.error(`[api] ${route.routeKey} answered ${resultBytes} bytes, over Lambda's 6 MB response limit`);
    return answerAsApiGateway(res, 'internal');
  }
  writeResult(res, outcome.result);
}

type Outcome =
  | { kind: 'answered'; result: unknown }
  | { kind: 'failed'; error: unknown }
  | { kind: 'timeout'; ms: number };

/** API Gateway stops waiting at the integration's timeout; the function itself runs on, as it does in AWS. */
function invokeWithin(route: LocalRoute, event: APIGatewayProxyEventV2): Promise<Outcome> {
  const ms = route.timeoutMs ?? INTEGRATION_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout', ms }), ms);
  });
  const invoked = Promise.resolve()
    .then(() => route.invoke(event))
    .then(
      (result): Outcome => ({ kind: 'answered', result }),
      (error: unknown): Outcome => ({ kind: 'failed', error }),
    );
  return Promise.race([invoked, timeout]).finally(() => clearTimeout(timer));
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

function declaredLength(req: IncomingMessage): number {
  const value = Number(req.headers['content-length']);
  return Number.isFinite(value) ? value : 0;
}

/**
 * Read the whole body. Past API_GATEWAY_PAYLOAD_BYTES the rest is read and dropped, so the 413 reaches a
 * client that is still sending; past MAX_DRAINED_BODY_BYTES (or when the declared length is already
 * beyond it) reading stops and the connection is closed after the 413.
 */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: Buffer | 'too-large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    if (declaredLength(req) > MAX_DRAINED_BODY_BYTES) {
      stopReading(req, res);
      settle('too-large');
      return;
    }
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= API_GATEWAY_PAYLOAD_BYTES) chunks.push(chunk);
      else if (size > MAX_DRAINED_BODY_BYTES) {
        stopReading(req, res);
        settle('too-large');
      }
    });
    req.on('end', () => settle(size > API_GATEWAY_PAYLOAD_BYTES ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', () => settle('aborted'));
    req.on('aborted', () => settle('aborted'));
  });
}

/** The rest of the body is not worth reading: stop, and close the connection after the answer. */
function stopReading(req: IncomingMessage, res: ServerResponse) {
  req.pause();
  res.shouldKeepAlive = false;
}

/** Answer after the request's body is consumed, so the client reads the answer and may reuse the connection. */
function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  afterBody(req, res, () => send(res, status, errorBody(status, message), headers));
}

function afterBody(req: IncomingMessage, res: ServerResponse, answer: () => void) {
  if (req.complete || req.readableEnded) return answer();
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_DRAINED_BODY_BYTES) {
      stopReading(req, res);
      answer();
    }
  });
  req.on('end', answer);
  req.on('error', () => res.destroy());
  req.resume();
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  routeKey: string,
  pathParameters: Record<string, string>,
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
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  const cookies = req.headers.cookie
    ?.split(';')
    .map((cookie) => cookie.trim())
    .filter(Boolean);
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies?.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length ? { pathParameters } : {}),
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
      routeKey,
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

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
