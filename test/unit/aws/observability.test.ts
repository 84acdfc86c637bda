import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JobCancelledError, PlateNotFoundError, WebhookDeliveryError } from '#core/errors.ts';
import type { Job } from '#core/jobs/job.ts';
import { telemetry } from '#core/telemetry-names.ts';

// As the local stack runs the functions, except that metrics are on, so that their EMF lines can be read.
// Powertools then writes through the global console, which the tests read back.
Object.assign(process.env, { POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false' });
const observability = { ...(await import('#aws/observability.ts')), ...(await import('#aws/metrics.ts')) };
const { logger } = observability;

type Line = Record<string, unknown>;
let lines: Line[] = [];
beforeAll(() => {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const)
    vi.spyOn(console, method).mockImplementation((text: unknown) => {
      lines.push(JSON.parse(String(text)) as Line);
    });
});
afterEach(() => {
  lines = [];
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

const context = (awsRequestId: string) =>
  ({
    functionName: 'photo-jobs-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:photo-jobs-test',
    memoryLimitInMB: '512',
    awsRequestId,
    getRemainingTimeInMillis: () => 30_000,
  }) as Context;

const logsOf = (message: string) => lines.filter((line) => line.message === message);
const emfOf = (metric: string) => lines.filter((line) => metric in line && '_aws' in line);

describe('observability › logs', () => {
  const task = middy<{ jobId: string; batchId?: string; fail?: boolean }, string>()
    .use(observability.observability((event: { jobId: string; batchId?: string }) => event))
    .handler(async (event) => {
      logger.info('working');
      if (event.fail) throw Object.assign(new Error('receiver down'), { name: 'WebhookDeliveryError' });
      return 'done';
    });

  it('carry the job, the batch and Lambda’s request id on every line of the invocation, as JSON', async () => {
    await task({ jobId: 'job_1', batchId: 'bat_1' }, context('req-1'));
    expect(logsOf('working')).toEqual([
      expect.objectContaining({
        level: 'INFO',
        service: telemetry.serviceName,
        job_id: 'job_1',
        batch_id: 'bat_1',
        function_request_id: 'req-1',
        function_name: 'photo-jobs-test',
      }),
    ]);
  });

  it('forget the ids of the last invocation', async () => {
    await task({ jobId: 'job_1', batchId: 'bat_1' }, context('req-1'));
    await task({ jobId: 'job_2' }, context('req-2'));
    const [, second] = logsOf('working');
    expect(second).toMatchObject({ job_id: 'job_2', function_request_id: 'req-2' });
    expect(second).not.toHaveProperty('batch_id');
  });

  it('log an error that leaves the handler once, with its ids, and let it through under its own name', async () => {
    await expect(task({ jobId: 'job_3', fail: true }, context('req-3'))).rejects.toMatchObject({
      name: 'WebhookDeliveryError',
    });
    expect(logsOf('invocation failed')).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        job_id: 'job_3',
        error: expect.objectContaining({ name: 'WebhookDeliveryError', message: 'receiver down' }),
      }),
    ]);
  });

  it('log an expected outcome without a stack: a photo without a plate or a receiver’s 500 is WARN, a cancelled job INFO', async () => {
    const ends = (error: Error) =>
      middy<{ jobId: string }, string>()
        .use(observability.observability((event: { jobId: string }) => event))
        .handler(async () => {
          throw error;
        });
    await expect(
      ends(new PlateNotFoundError('No license plate was detected'))({ jobId: 'job_5' }, context('r5')),
    ).rejects.toBeInstanceOf(PlateNotFoundError);
    await expect(
      ends(new JobCancelledError('Job job_6 is success; nothing to do'))({ jobId: 'job_6' }, context('r6')),
    ).rejects.toBeInstanceOf(JobCancelledError);
    await expect(
      ends(new WebhookDeliveryError('Attempt 1 to deliver d1 failed: HTTP 500'))(
        { jobId: 'job_7' },
        context('r7'),
      ),
    ).rejects.toBeInstanceOf(WebhookDeliveryError);
    expect(lines.map(({ level, message, job_id }) => ({ level, message, job_id }))).toEqual([
      { level: 'WARN', message: 'job outcome', job_id: 'job_5' },
      { level: 'INFO', message: 'job not run', job_id: 'job_6' },
      { level: 'WARN', message: 'webhook attempt failed, retried', job_id: 'job_7' },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/stack/);
  });

  it('read as one line in text: time, level, job id, message, the rest as key=value', () => {
    const line = observability.textLine({
      level: 'INFO',
      message: 'job settled',
      timestamp: '2026-11-26T18:12:03.123Z',
      service: telemetry.serviceName,
      function_request_id: 'req-1',
      job_id: 'job_7',
      status: 'success',
      operation: 'plate',
    });
    expect(line).toBe('18:12:03 INFO  job_7 job settled status=success operation=plate');
    const fault = observability.textLine({
      level: 'ERROR',
      message: 'invocation failed',
      timestamp: '2026-11-26T18:12:04.000Z',
      error: {
        name: 'TypeError',
        message: 'x is undefined',
        stack: 'TypeError: x is undefined\n    at f (a.ts:1)',
      },
    });
    expect(fault.split('\n')[0]).toBe('18:12:04 ERROR - invocation failed error="TypeError: x is undefined"');
    expect(fault.split('\n').length).toBeGreaterThan(1);
  });

  it('name an API request by the gateway’s request id and the job or batch in its path', () => {
    const event = {
      requestContext: { requestId: 'gw-1' },
      pathParameters: { job_id: 'job_4' },
    } as unknown as Parameters<typeof observability.httpCorrelation>[0];
    expect(observability.httpCorrelation(event)).toEqual({
      requestId: 'gw-1',
      jobId: 'job_4',
      batchId: undefined,
    });
  });
});

describe('observability › logs on a function’s own streams', () => {
  // Outside POWERTOOLS_DEV (as deployed) Powertools prints through a Console of its own on stdout and stderr.
  it('print each line as JSON there, opening the streams at the first line rather than at import', async () => {
    const dev = process.env.POWERTOOLS_DEV;
    delete process.env.POWERTOOLS_DEV;
    vi.resetModules();
    const streams = [vi.spyOn(process, 'stdout', 'get'), vi.spyOn(process, 'stderr', 'get')];
    const writes = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation(() => true),
    );
    for (const opened of streams) opened.mockClear();
    try {
      const fresh = await import('#aws/observability.ts');
      for (const opened of streams) expect(opened).not.toHaveBeenCalled();
      fresh.logger.info('job created', { job_id: 'job_10' });
      fresh.logger.warn('job outcome');
      const [out, err] = writes.map((write) =>
        write.mock.calls.map(([text]) => JSON.parse(String(text)) as Line),
      );
      expect(out).toEqual([
        expect.objectContaining({ level: 'INFO', message: 'job created', job_id: 'job_10' }),
      ]);
      expect(err).toEqual([
        expect.objectContaining({ level: 'WARN', message: 'job outcome', service: telemetry.serviceName }),
      ]);
    } finally {
      for (const spy of [...streams, ...writes]) spy.mockRestore();
      process.env.POWERTOOLS_DEV = dev;
    }
  });
});

describe('observability › metrics', () => {
  const job = (status: Job['status'], error: Job['error'] = null) =>
    ({ operation: 'plate', status, error }) as Pick<Job, 'operation' | 'status' | 'error'>;

  it('count a succeeded job by operation, as one EMF line in the service’s namespace', () => {
    observability.recordJobSettled(job('success'));
    const [line] = emfOf(telemetry.metrics.jobsSucceeded);
    expect(line).toMatchObject({
      [telemetry.metrics.jobsSucceeded]: 1,
      operation: 'plate',
      service: telemetry.serviceName,
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: telemetry.metricsNamespace,
            Dimensions: [expect.arrayContaining(['service', 'operation'])],
            Metrics: [{ Name: telemetry.metrics.jobsSucceeded, Unit: 'Count' }],
          },
        ],
      },
    });
    expect(emfOf(telemetry.metrics.jobsFailed)).toEqual([]);
  });

  it('count a failed job by operation and the spec’s error code', () => {
    observability.recordJobSettled(job('failed', { code: 802, message: 'no plate' }));
    const [line] = emfOf(telemetry.metrics.jobsFailed);
    expect(line).toMatchObject({ [telemetry.metrics.jobsFailed]: 1, operation: 'plate', code: '802' });
    expect(
      (line!._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics[0]?.Dimensions,
    ).toEqual([expect.arrayContaining(['service', 'operation', 'code'])]);
    expect(emfOf(telemetry.metrics.jobsSucceeded)).toEqual([]);
  });

  it('count nothing for a job that is not settled', () => {
    observability.recordJobSettled(job('processing'));
    expect(lines).toEqual([]);
  });

  it('count jobs created and time inference by operation', () => {
    observability.recordJobCreated({ operation: 'analyze' });
    observability.recordInferenceDuration('analyze', 1234);
    expect(emfOf(telemetry.metrics.jobsCreated)).toEqual([
      expect.objectContaining({ [telemetry.metrics.jobsCreated]: 1, operation: 'analyze' }),
    ]);
    expect(emfOf(telemetry.metrics.inferenceDuration)).toEqual([
      expect.objectContaining({ [telemetry.metrics.inferenceDuration]: 1234, operation: 'analyze' }),
    ]);
  });

  it('count each webhook attempt by outcome, whichever answer the receiver gave', async () => {
    const answers = [204, 503, null];
    const sender = observability.countedWebhookSender({
      post: async () => ({ statusCode: answers.shift() ?? null, error: null, latencyMs: 5 }),
    });
    for (let i = 0; i < 3; i++) await sender.post('https://example.invalid/hook', {}, '{}');
    expect(emfOf(telemetry.metrics.webhookAttempts).map((line) => line.outcome)).toEqual([
      'delivered',
      'failed',
      'failed',
    ]);
  });

  it('write nothing to stdout when metrics are off, as the local stack runs them', () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    observability.recordJobSettled(job('success'));
    expect(lines).toEqual([]);
  });
});

describe('observability › traces', () => {
  const task = middy<{ jobId: string }, string>()
    .use(observability.observability((event: { jobId: string }) => event))
    .handler(async () => 'done');

  it('never load the tracer and the X-Ray SDK where the function’s tracing is off (the construct’s default)', async () => {
    await expect(task({ jobId: 'job_8' }, context('r8'))).resolves.toBe('done');
    expect(observability.tracerLoaded()).toBe(false);
  });

  it('load them at the first invocation where it is on (POWERTOOLS_TRACE_ENABLED), and still answer', async () => {
    const env = process.env;
    // A new environment object is a new configuration (config.ts), as the local stack gives each function.
    process.env = { ...env, POWERTOOLS_TRACE_ENABLED: 'true' };
    try {
      await expect(task({ jobId: 'job_9' }, context('r9'))).resolves.toBe('done');
      expect(observability.tracerLoaded()).toBe(true);
    } finally {
      process.env = env;
    }
  });
});
