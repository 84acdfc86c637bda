import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { ServiceError } from '#core/errors.ts';
import type { Caller } from '#core/keys/caller.ts';
import { type Authenticator, credentialsOf } from './auth.ts';
import { errorBody, type HttpResult, json } from './responses.ts';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpContext = Context & { caller: Caller };

export type AuthMode = 'required' | 'none';

/**
 * The one middleware every API handler uses: it authenticates the caller onto `context.caller`
 * and turns every thrown error into the spec's error body, so handlers only ever throw.
 */
export function httpStack(options: {
  auth: AuthMode;
  authenticator: () => Authenticator;
}): MiddlewareObj<HttpEvent, HttpResult, Error, HttpContext> {
  return {
    name: 'http-stack',
    async before(request) {
      if (options.auth === 'none') return;
      request.context.caller = await options.authenticator()(credentialsOf(request.event));
    },
    onError(request) {
      request.response = errorResponse(request.error);
    },
  };
}

export function errorResponse(error: unknown): HttpResult {
  if (error instanceof ServiceError) {
    const message = error.expose ? error.message : 'The service could not complete the request; try again';
    if (!error.expose || error.status >= 500)
      console.error(JSON.stringify({ level: 'error', error: describe(error) }));
    return json(error.status, errorBody(error.code, message));
  }
  console.error(JSON.stringify({ level: 'error', error: describe(error) }));
  return json(500, errorBody(500, 'Internal error'));
}

function describe(error: unknown) {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { error };
}
