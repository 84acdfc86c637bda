import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError } from '#core/errors.ts';
import { replayDecision, validateIdempotencyKey } from '#core/idempotency/idempotency.ts';
import { aJob } from './fixtures.ts';

describe('Idempotency-Key', () => {
  it('is optional', () => {
    expect(validateIdempotencyKey(undefined)).toBeNull();
  });

  it('accepts 200 characters and refuses 201', () => {
    expect(validateIdempotencyKey('k'.repeat(200))).toHaveLength(200);
    expect(() => validateIdempotencyKey('k'.repeat(201))).toThrow(BadRequestError);
  });

  it('refuses an empty key', () => {
    expect(() => validateIdempotencyKey('  ')).toThrow(BadRequestError);
  });

  it('replays a finished job with 200', () => {
    const record = { jobId: 'job_x', fingerprint: 'f1' };
    expect(replayDecision(record, 'f1', aJob({ status: 'success' }))).toEqual({ status: 200 });
    expect(replayDecision(record, 'f1', aJob({ status: 'failed' }))).toEqual({ status: 200 });
  });

  it('returns a job still running with 202 instead of starting another', () => {
    expect(
      replayDecision({ jobId: 'job_x', fingerprint: 'f1' }, 'f1', aJob({ status: 'processing' })),
    ).toEqual({
      status: 202,
    });
  });

  it('refuses a different request under the same key with 409', () => {
    expect(() => replayDecision({ jobId: 'job_x', fingerprint: 'f1' }, 'f2', aJob())).toThrow(ConflictError);
  });
});
