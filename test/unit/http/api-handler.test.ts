import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { apiHandlers, type HandlerContract } from '#http/api-handler.ts';
import type { HttpContext, HttpEvent, HttpStackDeps } from '#http/http-stack.ts';
import { endpointContract } from '#http/openapi/contract.ts';
import type { HttpResult } from '#http/responses.ts';
import { json } from '#http/responses.ts';
import { contract as controlBatch } from '../../../functions/api/control-batch/schema.ts';
import { contract as deleteFile } from '../../../functions/api/delete-file/schema.ts';
import { contract as downloadBatch } from '../../../functions/api/download-batch/schema.ts';
import { contract as getResult } from '../../../functions/api/get-result/schema.ts';
import { contract as listFiles } from '../../../functions/api/list-files/schema.ts';
import { contract as listJobs } from '../../../functions/api/list-jobs/schema.ts';

// Public, so that no key is needed: the subject is what the handler's function is handed.
const apiHandler = apiHandlers({
  observe: () => [],
  deps: () => ({ maxBodyBytes: 1024, logger: { error: () => undefined } }) as unknown as HttpStackDeps,
});
const echo = <C extends HandlerContract>(contract: C) =>
  apiHandler({ ...contract, auth: 'none' as const }, async ({ path, caller, query }) =>
    json(200, { path, caller, query }),
  );

const call = async (
  handler: ReturnType<typeof echo>,
  pathParameters: Record<string, string>,
  queryStringParameters?: Record<string, string>,
) => {
  const answer = (await handler(
    {
      routeKey: 'POST /x',
      rawPath: '/x',
      rawQueryString: '',
      headers: {},
      pathParameters,
      ...(queryStringParameters ? { queryStringParameters } : {}),
      requestContext: { requestId: 'r1', http: { method: 'POST', path: '/x', sourceIp: '127.0.0.1' } },
      isBase64Encoded: false,
    } as unknown as HttpEvent,
    {} as HttpContext,
  )) as HttpResult;
  return { status: answer.statusCode, body: JSON.parse(answer.body!) };
};

describe('apiHandler', () => {
  it('hands the function the path parameters as the contract parses them', async () => {
    expect(await call(echo(deleteFile), { file_id: '17' })).toEqual({
      status: 200,
      body: { path: { file_id: 17 }, query: {} },
    });
    const batch = await call(echo(controlBatch), { batch_id: 'bat_1', action: 'pause' });
    expect(batch.body.path).toEqual({ batch_id: 'bat_1', action: 'pause' });
  });

  it.each([
    ['abc', 'file_id must be a non-negative integer'],
    ['0', 'file_id must be a positive integer'],
    ['0x1', 'file_id must be a non-negative integer'],
    ['12345678901234567', 'file_id must be a non-negative integer'],
  ])('answers DELETE /files/%s with a 400 naming file_id, as its contract says', async (raw, message) => {
    expect(await call(echo(deleteFile), { file_id: raw })).toEqual({
      status: 400,
      body: { code: 400, message, result: false },
    });
  });

  it('answers a path parameter its schema refuses with 404 and the schema message', async () => {
    expect(await call(echo(controlBatch), { batch_id: 'bat_1', action: 'explode' })).toEqual({
      status: 404,
      body: {
        code: 404,
        message: 'No batch action explode; use pause, resume, cancel, retry',
        result: false,
      },
    });
    expect(await call(echo(getResult), { job_id: 'job_1', name: 'result.gif' })).toEqual({
      status: 404,
      body: { code: 404, message: 'No such result', result: false },
    });
  });

  it('hands the function the query as the contract parses it, defaults filled in', async () => {
    expect((await call(echo(listFiles), {})).body.query).toEqual({ limit: 25 });
    expect((await call(echo(listFiles), {}, { limit: '100', before: '0' })).body.query).toEqual({
      limit: 100,
      before: 0,
    });
    expect((await call(echo(listJobs), {}, { limit: '2', status: 'failed' })).body.query).toEqual({
      limit: 2,
      status: 'failed',
    });
    const batch = { batch_id: 'bat_1' };
    expect((await call(echo(downloadBatch), batch, { partial: 'TRUE' })).body.query).toEqual({
      partial: true,
    });
    expect((await call(echo(downloadBatch), batch)).body.query).toEqual({ partial: false });
  });

  it('builds a query schema at the first request that reads it, not at import, and only once', async () => {
    let built = 0;
    const contract = endpointContract({
      auth: 'none',
      query: () => {
        built += 1;
        return z.object({ n: z.coerce.number() });
      },
      operations: { 'GET /x': { operationId: 'x', summary: 'x', tag: 'Jobs', responses: {} } },
    });
    const handler = echo(contract);
    expect(built).toBe(0);
    expect((await call(handler, {}, { n: '2' })).body.query).toEqual({ n: 2 });
    expect((await call(handler, {}, { n: '3' })).body.query).toEqual({ n: 3 });
    expect(built).toBe(1);
  });

  it.each([
    [listFiles, { limit: '0' }, 'limit must be between 1 and 100'],
    [listFiles, { limit: '101' }, 'limit must be between 1 and 100'],
    [listFiles, { limit: '1e1' }, 'limit must be a non-negative integer'],
    [listFiles, { limit: ' 5' }, 'limit must be a non-negative integer'],
    [listFiles, { before: '-1' }, 'before must be a non-negative integer'],
    [listFiles, { before: '1.5' }, 'before must be a non-negative integer'],
    [listJobs, { limit: '101' }, 'limit must be an integer between 1 and 100'],
    [listJobs, { limit: 'ten' }, 'limit must be an integer between 1 and 100'],
    [listJobs, { before: '0' }, 'before must be a positive integer'],
    [listJobs, { status: 'done' }, expect.stringMatching(/^status must be one of queued, /)],
    [downloadBatch, { partial: 'maybe' }, 'partial must be true/false, 1/0 or smooth/raw'],
  ])(
    'answers a query its contract refuses with a 400 naming the parameter (%#)',
    async (contract, query, message) => {
      const answer = await call(echo(contract as HandlerContract), { batch_id: 'bat_1' }, query);
      expect(answer).toEqual({ status: 400, body: { code: 400, message, result: false } });
    },
  );
});
