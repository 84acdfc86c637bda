import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiServer } from '../../../local/api-gateway.ts';
import { FUNCTION_FAILED, invokeWithin, lambdaContext, loadHandler } from '../../../local/lambda-runtime.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');

// As the local stack sets them: pretty-printed logs, invocations of one function overlapping.
Object.assign(process.env, { POWERTOOLS_DEV: 'true', AWS_LAMBDA_MAX_CONCURRENCY: '16' });

const lines: Record<string, unknown>[] = [];
beforeAll(() => {
  vi.spyOn(console, 'info').mockImplementation((text: unknown) => {
    lines.push(JSON.parse(String(text)) as Record<string, unknown>);
  });
});

describe('local Lambda runtime', () => {
  it('keeps the log keys of overlapping invocations apart, as Lambda’s runtime does', async () => {
    const handler = await loadHandler(FIXTURES, 'slow-handler.ts');
    await Promise.all([
      handler({ jobId: 'job_slow', waitMs: 60 }, lambdaContext('fn', 5)),
      handler({ jobId: 'job_fast', waitMs: 10 }, lambdaContext('fn', 5)),
    ]);
    const jobOf = (message: string) =>
      lines.filter((line) => line.message === message).map((line) => line.job_id);
    expect(jobOf('started')).toEqual(['job_slow', 'job_fast']);
    expect(jobOf('finished')).toEqual(['job_fast', 'job_slow']);
    const requestIds = new Set(lines.map((line) => `${line.job_id} ${line.function_request_id}`));
    expect(requestIds.size).toBe(2);
  });
});

describe('local Lambda runtime: each function its own environment', () => {
  it('gives each invocation only its function’s variables, and its own configuration, while they overlap', async () => {
    process.env.STRAY_VARIABLE = 'of the stack process';
    process.env.TABLE_NAME = 'the operator’s table';
    const withTable = await loadHandler(FIXTURES, 'env-handler.ts', {
      TABLE_NAME: 'photo-jobs-local',
      MAX_JOBS_IN_FLIGHT: '3',
    });
    const withoutTable = await loadHandler(FIXTURES, 'env-handler-other.ts', {});
    const [first, second] = await Promise.all([
      withTable({ waitMs: 40 }, lambdaContext('WithTable', 5)),
      withoutTable({ waitMs: 10 }, lambdaContext('WithoutTable', 5)),
    ]);
    expect(first).toEqual({
      table: 'photo-jobs-local',
      stray: null,
      configured: 'photo-jobs-local',
      maxJobs: 3,
    });
    expect(second).toEqual({ table: null, stray: null, configured: null, maxJobs: 20 });
    // Outside any invocation, the process's own environment.
    expect(process.env.TABLE_NAME).toBe('the operator’s table');
    delete process.env.STRAY_VARIABLE;
    delete process.env.TABLE_NAME;
  });
});

describe('local Lambda runtime: the function timeout', () => {
  it('fails a run past the timeout as Lambda.Unknown, and signs its later calls with a key no role has', async () => {
    const handler = await loadHandler(FIXTURES, 'late-writer.ts', { AWS_ACCESS_KEY_ID: 'LateWriter' });
    const seen = (globalThis as { lateWriterCallers?: string[] }).lateWriterCallers!;
    await expect(
      invokeWithin(handler, { waitMs: 150 }, lambdaContext('LateWriter', 0.05), 0.05),
    ).rejects.toMatchObject({
      name: FUNCTION_FAILED,
      message: 'Task timed out after 0.05 seconds',
    });
    await vi.waitFor(() => expect(seen).toEqual(['LateWriter-timed-out']));
    // One that finishes in time signs as its function.
    await expect(invokeWithin(handler, { waitMs: 1 }, lambdaContext('LateWriter', 5), 5)).resolves.toBe(
      'done',
    );
    expect(seen.at(-1)).toBe('LateWriter');
  });

  it('answers a request whose function timed out with API Gateway’s 500', async () => {
    const handler = await loadHandler(FIXTURES, 'late-writer.ts', { AWS_ACCESS_KEY_ID: 'LateWriter' });
    const server = createApiServer([
      {
        routeKey: 'GET /api/v1/quota',
        invoke: (event) =>
          invokeWithin(handler, { waitMs: 200 }, lambdaContext('Quota', 0.05), 0.05).then(() => event),
      },
    ]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/quota`);
      expect(answer.status).toBe(500);
      expect(await answer.json()).toEqual({ message: 'Internal Server Error' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
