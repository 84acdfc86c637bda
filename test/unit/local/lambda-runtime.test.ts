import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext, loadHandler } from '../../../local/lambda-runtime.ts';

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
    const handler = await loadHandler(path.join(import.meta.dirname, 'fixtures'), 'slow-handler.ts');
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
