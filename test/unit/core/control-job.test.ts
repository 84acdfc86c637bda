import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  GoneError,
  NotFoundError,
  PermissionDeniedError,
  TransientError,
} from '#core/errors.ts';
import type { Job } from '#core/jobs/job.ts';
import type { Caller } from '#core/keys/caller.ts';
import { cancelOwnJob, retryOwnJob, startOrFail } from '#core/use-cases/control-job.ts';
import { prepareJob } from '#core/use-cases/prepare-job.ts';
import { settleJob } from '#core/use-cases/settle-job.ts';
import { aJob } from './fixtures.ts';
import { memoryObjects, memoryStore } from './memory-ports.ts';

const owner: Caller = { kind: 'key', keyId: 'key_1', account: 'key_1', defaults: {} };
const stranger: Caller = { kind: 'key', keyId: 'key_2', account: 'key_2', defaults: {} };
const output = { output_kind: 'image' as const, inference_cached: false, model_version: {} };

const reservationOf = (job: Job) =>
  ({ account: 'key_1', amount: 5, kind: 'reserve', jobId: job.id, jobVersion: job.version }) as const;

/** A store holding one job whose 5 credits are reserved from an account that had 20. */
async function withReservedJob() {
  const store = memoryStore({ key_1: 20 });
  const job = aJob();
  await store.jobs.insert(job, reservationOf(job), null);
  return { store, job };
}

describe('cancel', () => {
  it('cancels a queued job with 200 and releases its credits', async () => {
    const { store, job } = await withReservedJob();
    const result = await cancelOwnJob(store, owner, job.id);
    expect(result.status).toBe(200);
    expect(result.job.status).toBe('cancelled');
    expect(store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });
  });

  it('answers 200 again for a cancelled job without moving credits twice', async () => {
    const { store, job } = await withReservedJob();
    await cancelOwnJob(store, owner, job.id);
    expect((await cancelOwnJob(store, owner, job.id)).status).toBe(200);
    expect(store.balances.get('key_1')!.available).toBe(20);
  });

  it('flags a processing job with 202; settlement then cancels it instead of charging', async () => {
    const { store, job } = await withReservedJob();
    await prepareJob(store, job.id);
    const flagged = await cancelOwnJob(store, owner, job.id);
    expect(flagged.status).toBe(202);
    expect(flagged.job).toMatchObject({ status: 'processing', cancelRequested: true });
    const settled = await settleJob(store, {
      jobId: job.id,
      outcome: 'success',
      result: { output, files: [] },
    });
    expect(settled.status).toBe('cancelled');
    expect(store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });
  });

  it('refuses a finished job with 409', async () => {
    const { store, job } = await withReservedJob();
    await prepareJob(store, job.id);
    await settleJob(store, { jobId: job.id, outcome: 'success', result: { output, files: [] } });
    await expect(cancelOwnJob(store, owner, job.id)).rejects.toThrow(ConflictError);
  });

  it("hides another owner's job behind 404", async () => {
    const { store, job } = await withReservedJob();
    await expect(cancelOwnJob(store, stranger, job.id)).rejects.toThrow(NotFoundError);
  });
});

describe('retry', () => {
  /** The store with a bucket that holds the job's source photo. */
  const withSource = <S extends object>(store: S) => {
    const bucket = memoryObjects();
    bucket.objects.set(aJob().source.key, Buffer.from('jpeg'));
    return { ...store, objects: bucket.store, bucket: bucket.objects };
  };

  async function failedJob() {
    const { store: plain, job } = await withReservedJob();
    await prepareJob(plain, job.id);
    await settleJob(plain, { jobId: job.id, outcome: 'failure', failure: { Error: 'PlateNotFoundError' } });
    return { store: withSource(plain), job };
  }
  const DAY = 86_400_000;
  const daysAfterCreation = (job: Job, days: number) => ({
    now: () => new Date(Date.parse(job.createdAt) + days * DAY),
  });

  it('queues a failed job again with 202, a new reservation and a new execution', async () => {
    const { store, job } = await failedJob();
    const result = await retryOwnJob(store, owner, job.id);
    expect(result.status).toBe(202);
    expect(result.job).toMatchObject({ status: 'queued', error: null, retries: 1 });
    expect(store.balances.get('key_1')).toEqual({ available: 15, reserved: 5, usedTotal: 0 });
    expect(store.started).toEqual([{ jobId: job.id, attempt: 2 }]);
  });

  it('answers 200 for a repeated retry while the retried job runs, reserving nothing more', async () => {
    const { store, job } = await failedJob();
    await retryOwnJob(store, owner, job.id);
    const again = await retryOwnJob(store, owner, job.id);
    expect(again.status).toBe(200);
    expect(store.balances.get('key_1')!.reserved).toBe(5);
    expect(store.started).toHaveLength(1);
  });

  it('refuses a job that did not fail with 409', async () => {
    const { store, job } = await withReservedJob();
    await expect(retryOwnJob(withSource(store), owner, job.id)).rejects.toThrow(ConflictError);
  });

  it('answers 410 once the photos have expired, 7 days after creation, and reserves and starts nothing', async () => {
    const { store, job } = await failedJob();
    const late = { ...store, clock: daysAfterCreation(job, 7) };
    const refused = await retryOwnJob(late, owner, job.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GoneError);
    expect((refused as GoneError).status).toBe(410);
    expect((refused as GoneError).message).toBe(
      `The photos of job ${job.id} expired at 2026-11-29T08:00:00.000Z and are deleted, so it cannot be ` +
        'retried; create a new job. Nothing was charged',
    );
    expect(store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });
    expect(store.started).toEqual([]);
    expect((await store.jobs.get(job.id))!.status).toBe('failed');
  });

  it('still retries a moment before the photos expire, though the bucket may keep them longer', async () => {
    const { store, job } = await failedJob();
    const result = await retryOwnJob({ ...store, clock: daysAfterCreation(job, 7 - 1 / DAY) }, owner, job.id);
    expect(result.status).toBe(202);
  });

  it('answers 410 for a source no longer stored before its time, and reserves nothing', async () => {
    const { store, job } = await failedJob();
    store.bucket.clear();
    await expect(retryOwnJob(store, owner, job.id)).rejects.toThrow(/no longer stored/);
    expect(store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });
    expect(store.started).toEqual([]);
  });

  it('answers 410 when the custom background is gone, though the photo is there', async () => {
    const { store, job } = await failedJob();
    const stored = (await store.jobs.get(job.id))!;
    const withBackground = {
      ...stored,
      params: { ...stored.params, backgroundFileKey: 'sources/x/background.png' },
    };
    await store.jobs.update(stored, { ...withBackground, version: stored.version + 1 }, null);
    await expect(retryOwnJob(store, owner, job.id)).rejects.toThrow(GoneError);
  });

  it('refuses with 402 when the balance cannot cover the new reservation', async () => {
    const store = memoryStore({ key_1: 5 });
    const job = aJob();
    await store.jobs.insert(job, reservationOf(job), null);
    await prepareJob(store, job.id);
    await settleJob(store, { jobId: job.id, outcome: 'failure', failure: { Error: 'PlateNotFoundError' } });
    const other = aJob({ id: 'job_other' });
    await store.jobs.insert(other, reservationOf(other), null);
    await expect(retryOwnJob(withSource(store), owner, job.id)).rejects.toThrow(/needs 5 credits/);
  });
});

describe('settlement', () => {
  it('charges a success once even when the step runs twice', async () => {
    const { store, job } = await withReservedJob();
    await prepareJob(store, job.id);
    const result = { output, files: [] };
    await settleJob(store, { jobId: job.id, outcome: 'success', result });
    await settleJob(store, { jobId: job.id, outcome: 'success', result });
    await settleJob(store, { jobId: job.id, outcome: 'failure', failure: { Error: 'States.Timeout' } });
    expect(store.balances.get('key_1')).toEqual({ available: 15, reserved: 0, usedTotal: 5 });
    expect((await store.jobs.get(job.id))!.status).toBe('success');
  });

  it('turns a workflow failure into the job error with the spec code, and releases', async () => {
    const { store, job } = await withReservedJob();
    await prepareJob(store, job.id);
    const failed = await settleJob(store, {
      jobId: job.id,
      outcome: 'failure',
      failure: {
        Error: 'PlateNotFoundError',
        Cause: JSON.stringify({
          errorType: 'PlateNotFoundError',
          errorMessage: 'No license plate was detected',
        }),
      },
    });
    expect(failed.error).toEqual({ code: 803, message: 'No license plate was detected' });
    expect(store.balances.get('key_1')!.available).toBe(20);
  });

  it('never shows internal error details to the client', async () => {
    const { store, job } = await withReservedJob();
    await prepareJob(store, job.id);
    const failed = await settleJob(store, {
      jobId: job.id,
      outcome: 'failure',
      failure: {
        Error: 'TypeError',
        Cause: JSON.stringify({ errorMessage: 'x is undefined at /var/task/secret.js' }),
      },
    });
    expect(failed.error).toEqual({ code: 500, message: 'Processing failed because of an internal error' });
  });

  it('stops a job cancelled while queued at the first step', async () => {
    const { store, job } = await withReservedJob();
    await cancelOwnJob(store, owner, job.id);
    await expect(prepareJob(store, job.id)).rejects.toMatchObject({ name: 'JobCancelledError' });
  });
});

describe('a workflow that cannot start', () => {
  const failingStart = (name: string) => {
    const error = new Error('User: arn:aws:sts::000000000000:assumed-role/api/fn is not authorized');
    error.name = name;
    return error;
  };

  it.each([
    ['a denied start (a deployment fault)', 'AccessDeniedException', PermissionDeniedError, 500],
    ['a transient fault', 'ServiceUnavailable', TransientError, 503],
  ])('fails the job, releases its credits and answers for %s', async (_, name, ErrorClass, status) => {
    const { store, job } = await withReservedJob();
    const denying = {
      ...store,
      workflow: {
        async start() {
          throw failingStart(name);
        },
      },
    };
    const refused = await startOrFail(denying, job, 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ErrorClass);
    expect((refused as PermissionDeniedError).status).toBe(status);
    expect((refused as Error).message).not.toContain('assumed-role');
    expect((await store.jobs.get(job.id))?.status).toBe('failed');
    expect(store.balances.get('key_1')).toEqual({ available: 20, reserved: 0, usedTotal: 0 });
  });
});
