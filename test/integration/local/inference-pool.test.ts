import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultInferenceWorkers, inferencePool } from '../../../local/inference-pool.ts';
import { FUNCTION_FAILED } from '../../../local/lambda-runtime.ts';
import { REPO_ROOT } from '../support/local-server.ts';

const HANDLER = 'test/support/sleepy-handler.ts';
const GB = 1024 ** 3;

/** The local stand-in of the inference function's concurrency and timeout, as Lambda applies them. */
describe('the local inference pool', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'inference-pool-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });
  const pool = (size: number, timeoutSeconds = 30) =>
    inferencePool({ size, repoRoot: REPO_ROOT, handler: HANDLER, functionName: 'Inference', timeoutSeconds });

  it('runs an invoke past its concurrency once a worker is free, and says when it starts', async () => {
    const one = pool(1);
    try {
      const starts: string[] = [];
      const first = one.invoke({ ms: 500 }, () => starts.push('first'));
      const second = one.invoke({ ms: 0 }, () => starts.push('second'));
      expect(starts).toEqual(['first']);
      expect(await first).toEqual({ slept: 500 });
      expect(await second).toEqual({ slept: 0 });
      expect(starts).toEqual(['first', 'second']);
    } finally {
      await one.close();
    }
  });

  it('stops a run at the function timeout as Lambda does (Lambda.Unknown), and nothing it writes later lands', async () => {
    const one = pool(1, 3);
    const late = path.join(scratch, 'late.txt');
    try {
      // It would write at 3.5 s; the timeout ends it at 3 s.
      await expect(one.invoke({ ms: 3500, file: late })).rejects.toMatchObject({
        name: FUNCTION_FAILED,
        message: 'Task timed out after 3.00 seconds',
      });
      // The worker is free again at once, in a fresh thread; by the end of this run, past 3.5 s, the
      // stopped one would have written.
      expect(await one.invoke({ ms: 600 })).toEqual({ slept: 600 });
      expect(existsSync(late)).toBe(false);
    } finally {
      await one.close();
    }
  });

  it('closes at once with a run in flight and others waiting, and refuses invokes after', async () => {
    const one = pool(1);
    let running!: Promise<unknown>;
    await new Promise<void>((started) => {
      running = one.invoke({ ms: 60_000 }, started);
    });
    const waiting = Array.from({ length: 20 }, () => one.invoke({ ms: 60_000 }));
    for (const promise of [running, ...waiting]) promise.catch(() => undefined);
    const closing = Date.now();
    await one.close();
    expect(Date.now() - closing).toBeLessThan(2000);
    await expect(running).rejects.toMatchObject({ name: 'TransientError' });
    for (const promise of waiting) await expect(promise).rejects.toMatchObject({ name: 'TransientError' });
    await expect(one.invoke({ ms: 0 })).rejects.toMatchObject({ name: 'TransientError' });
  });

  it('defaults to one worker per four cores, within the memory, at least one', () => {
    expect(defaultInferenceWorkers(2, 24 * GB)).toBe(1);
    expect(defaultInferenceWorkers(8, 16 * GB)).toBe(2);
    expect(defaultInferenceWorkers(16, 5 * GB)).toBe(1);
    expect(defaultInferenceWorkers(1, 1 * GB)).toBe(1);
  });
});
