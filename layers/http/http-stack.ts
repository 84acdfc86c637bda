import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import {
  MethodNotAllowedError,
  NotFoundError,
  ServiceError,
  TooManyRequestsError,
  UnauthorizedError,
} from '#core/errors.ts';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { VerifiedKeys } from '#core/keys/verified-keys.ts';
import { MAX_ID_CHARS } from '#core/limits/request.ts';
import { admitRequest, type RequestRates } from '#core/use-cases/admit-request.ts';
import { type AuthDeps, callerForKey, guestCaller, presentedKey } from './auth.ts';
import { type ParsedBody, parseBody } from './body.ts';
import { errorBody, type HttpResult, json } from './responses.ts';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpContext = Context & { caller: Caller; body: ParsedBody; guestCookie?: string };

/**
 * - `key`: an API key or the master key; no key is 401 (spec 5.6 for /assets and /batches, and /webhook).
 * - `key-or-guest`: no key runs as the session's guest (spec 5.4).
 * - `none`: public (result links, the OpenAPI document).
 */
/** Every id and result name the service issues is made of these. */
const ID_CHARS = /^[A-Za-z0-9_.-]+$/;

export type AuthMode = 'key' | 'key-or-guest' | 'none';

/** What a stack that reads no body and authenticates no one needs: where errors are logged. */
export interface BodilessStackDeps {
  /** Where an error the client is not told about goes (the function's structured log). */
  logger: ErrorLog;
}

export interface HttpStackDeps extends Omit<AuthDeps, 'masterKeySha256'>, BodilessStackDeps {
  maxBodyBytes: number;
  /** The master key's sha256, loaded once (it may live in Secrets Manager or SSM); `null`: none. */
  masterKey(): Promise<string | null>;
  /** Keys verified in the last seconds, which may authenticate reads; absent: every request reads the key. */
  verifiedKeys?: VerifiedKeys;
  /** Where an error the client is not told about goes (the function's structured log). */
  logger: ErrorLog;
  /** Per-client rate limits; absent: none (tests of other matters). */
  rates?: RequestRates;
}

interface ErrorLog {
  error(message: string, error: Error): void;
}

/**
 * The one middleware every API handler uses: it parses the body (JSON, multipart or form) onto
 * `context.body`, authenticates the caller onto `context.caller`, adds a new guest session's cookie,
 * and turns every thrown error into the spec's error body, so handlers only ever throw.
 */
export function httpStack(
  options:
    | {
        auth: AuthMode;
        deps: () => HttpStackDeps;
        /** Whether a request without key or session opens a guest session (job creation only). */
        opensGuestSession?: boolean;
      }
    | {
        /** A public answer that no body can change (the `$default` route's): the body is not read. */
        auth: 'none';
        body: 'ignored';
        deps: () => BodilessStackDeps;
      },
): MiddlewareObj<HttpEvent, HttpResult, Error, HttpContext> {
  return {
    name: 'http-stack',
    async before(request) {
      if ('body' in options) {
        request.context.body = { fields: {}, files: {} };
        return;
      }
      // An id of any length or spelling that we could never have issued names nothing: 404, before any
      // lookup (a 2 KB id would otherwise reach DynamoDB as an invalid key and come back as a 500).
      for (const value of Object.values(request.event.pathParameters ?? {})) {
        if (!value || value.length > MAX_ID_CHARS || !ID_CHARS.test(value))
          throw new NotFoundError('Not found');
      }
      const deps = options.deps();
      const body = await parseBody(request.event, deps.maxBodyBytes);
      request.context.body = body;
      if (options.auth === 'none') return;
      const key = presentedKey(request.event, body.fields, deps.policy);
      if (deps.rates && (key || options.auth === 'key-or-guest')) {
        const address = request.event.requestContext?.http?.sourceIp ?? 'unknown';
        await admitRequest(
          deps.rates,
          key ? { kind: 'key', keyId: keyIdOf(hashSecret(key)) } : { kind: 'address', address },
        );
      }
      if (key) {
        const method = request.event.requestContext?.http?.method;
        request.context.caller = await callerForKey(
          { ...deps, masterKeySha256: await deps.masterKey() },
          key,
          deps.verifiedKeys && { keys: deps.verifiedKeys, read: method === 'GET' || method === 'HEAD' },
        );
      } else if (options.auth === 'key-or-guest') {
        const { caller, cookie } = await guestCaller(deps, request.event, {
          open: options.opensGuestSession ?? false,
        });
        request.context.caller = caller;
        request.context.guestCookie = cookie;
      } else {
        throw new UnauthorizedError('Send an API key in X-API-Key or Authorization: Bearer');
      }
    },
    after(request) {
      const cookie = request.context.guestCookie;
      if (cookie && request.response) {
        request.response = { ...request.response, cookies: [...(request.response.cookies ?? []), cookie] };
      }
      if (request.response) request.response = headless(request.event, request.response);
    },
    onError(request) {
      const response = errorResponse(request.error, options.deps().logger);
      const cookie = request.context.guestCookie;
      // The session was opened even if the request failed: keep the client on it.
      request.response = headless(request.event, cookie ? { ...response, cookies: [cookie] } : response);
    },
  };
}

/** HEAD is answered as GET is, with the same status and headers and no body (RFC 9110, 9.3.2). */
function headless(event: HttpEvent, response: HttpResult): HttpResult {
  if (event.requestContext?.http?.method?.toUpperCase() !== 'HEAD') return response;
  const { body: _body, isBase64Encoded: _encoded, ...rest } = response;
  return rest as HttpResult;
}

/** The spec's error body for a thrown error; what the client is not told (a 5xx, a hidden cause) is logged. */
function errorResponse(error: unknown, log: ErrorLog): HttpResult {
  if (error instanceof ServiceError) {
    const message = error.expose ? error.message : 'The service could not complete the request; try again';
    if (!error.expose || error.status >= 500) log.error('request failed', error);
    const retryAfter =
      error instanceof TooManyRequestsError ? { 'retry-after': String(error.retryAfterSeconds) } : undefined;
    const allow = error instanceof MethodNotAllowedError ? { allow: error.allow.join(', ') } : undefined;
    return json(error.status, errorBody(error.code, message), { ...retryAfter, ...allow });
  }
  log.error('request failed', error instanceof Error ? error : new Error(String(error)));
  return json(500, errorBody(500, 'Internal error'));
}
