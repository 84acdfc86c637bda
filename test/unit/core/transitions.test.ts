import { describe, expect, it } from 'vitest';
import { ConflictError } from '#core/errors.ts';
import { type JobStatus, sweeperWatches } from '#core/jobs/job.ts';
import { cancelJob, failJob, retryJob, startJob, succeedJob } from '#core/jobs/transitions.ts';
import { aJob } from './fixtures.ts';

const NOW = '2026-11-22T08:01:00.000Z';
const output = {
  url: '/api/v1/results/x/result.jpg',
  output_kind: 'image' as const,
  inference_cached: false,
  model_version: {},
};

describe('job transitions', () => {
  it('starts a queued job: processing, one more attempt, a start time', () => {
    const started = startJob(aJob(), NOW);
    expect(started).toMatchObject({ status: 'processing', stage: 'preparing', attempts: 1, startedAt: NOW });
  });

  it('charges exactly the reservation on success', () => {
    const done = succeedJob(startJob(aJob(), NOW), output, NOW);
    expect(done).toMatchObject({
      status: 'success',
      chargedCredits: 5,
      output,
      error: null,
      finishedAt: NOW,
    });
  });

  it('charges nothing on failure and keeps the error', () => {
    const failed = failJob(startJob(aJob(), NOW), { code: 803, message: 'no plate' }, NOW);
    expect(failed).toMatchObject({ status: 'failed', chargedCredits: 0, error: { code: 803 }, output: null });
  });

  it.each<[JobStatus, boolean]>([
    ['queued', true],
    ['processing', false],
    ['success', false],
    ['failed', false],
    ['cancelled', false],
  ])('only a queued job can start (%s → %s)', (status, allowed) => {
    const start = () => startJob(aJob({ status }), NOW);
    if (allowed) expect(start()).toMatchObject({ status: 'processing' });
    else expect(start).toThrow(ConflictError);
  });

  it('retries a failed job as a fresh attempt, no longer owing the failed attempt a follow-up', () => {
    const failed = failJob(startJob(aJob(), NOW), { code: 500, message: 'stuck' }, NOW);
    const retried = retryJob({ ...failed, followUpDue: 1 });
    expect(retried).toMatchObject({ status: 'queued', retries: 1, error: null });
    expect(retried.followUpDue).toBeUndefined();
    // Watched again for its new run, not for the old attempt's webhook.
    expect(sweeperWatches(retried)).toBe(true);
    expect(sweeperWatches(failed)).toBe(false);
    expect(sweeperWatches({ ...failed, followUpDue: 1 })).toBe(true);
  });

  it('cannot succeed twice', () => {
    const done = succeedJob(startJob(aJob(), NOW), output, NOW);
    expect(() => succeedJob(done, output, NOW)).toThrow(ConflictError);
  });

  describe('cancel (spec section 3)', () => {
    it('cancels a queued job at once', () => {
      const { job, immediate } = cancelJob(aJob(), NOW);
      expect(immediate).toBe(true);
      expect(job).toMatchObject({ status: 'cancelled', cancelRequested: true, chargedCredits: 0 });
    });

    it('only flags a processing job', () => {
      const { job, immediate } = cancelJob(startJob(aJob(), NOW), NOW);
      expect(immediate).toBe(false);
      expect(job).toMatchObject({ status: 'processing', cancelRequested: true });
    });

    it('is a no-op on a cancelled job', () => {
      const once = cancelJob(aJob(), NOW).job;
      expect(cancelJob(once, '2030-01-01T00:00:00.000Z')).toEqual({ job: once, immediate: true });
    });

    it.each<JobStatus>(['success', 'failed'])('refuses a %s job with 409', (status) => {
      expect(() => cancelJob(aJob({ status }), NOW)).toThrow(ConflictError);
    });
  });
});
