import { describe, expect, it } from 'vitest';
import { handler } from '../../../functions/api/no-route/handler.ts';
import type { HttpContext, HttpEvent } from '../../../layers/http/http-stack.ts';
import type { HttpResult } from '../../../layers/http/responses.ts';

const call = async (method: string, path: string, body?: { text: string; type: string }) =>
  (await handler(
    {
      routeKey: '$default',
      rawPath: path,
      rawQueryString: '',
      headers: body ? { 'content-type': body.type } : {},
      requestContext: { requestId: 'r1', http: { method, path, sourceIp: '127.0.0.1' } },
      ...(body ? { body: body.text } : {}),
      isBase64Encoded: false,
    } as unknown as HttpEvent,
    {} as HttpContext,
  )) as HttpResult;

// No TABLE_NAME, BUCKET_NAME or state machine: the function's template entry has none, and it needs none.
describe('the $default route (functions/api/no-route)', () => {
  it('answers an unknown path with 404 in the error body', async () => {
    const answer = await call('GET', '/api/v1/nothing-here');
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body!)).toEqual({
      code: 404,
      message: 'No route /api/v1/nothing-here',
      result: false,
    });
    expect(answer.headers?.allow).toBeUndefined();
  });

  it('answers a known path with another method 405, with Allow from the route table', async () => {
    const quota = await call('DELETE', '/api/v1/quota');
    expect(quota.statusCode).toBe(405);
    expect(quota.headers?.allow).toBe('GET, HEAD');
    expect(JSON.parse(quota.body!)).toEqual({
      code: 405,
      message: 'DELETE is not allowed on /api/v1/quota; use GET, HEAD',
      result: false,
    });
    const cancel = await call('GET', '/api/v1/jobs/job_1/cancel');
    expect(cancel).toMatchObject({ statusCode: 405, headers: { allow: 'POST' } });
    const page = await call('POST', '/docs');
    expect(page).toMatchObject({ statusCode: 405, headers: { allow: 'GET, HEAD' } });
  });

  it('never reads the body: a malformed one changes nothing', async () => {
    const answer = await call('POST', '/api/v1/nowhere', { text: '{not json', type: 'application/json' });
    expect(answer.statusCode).toBe(404);
  });

  it('answers HEAD without a body, as every route does', async () => {
    const answer = await call('HEAD', '/api/v1/jobs/job_1/cancel');
    expect(answer.statusCode).toBe(405);
    expect(answer.body).toBeUndefined();
  });
});
