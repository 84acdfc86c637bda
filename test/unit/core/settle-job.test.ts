import { describe, expect, it } from 'vitest';
import { JobCancelledError } from '#core/errors.ts';
import type { Job } from '#core/jobs/job.ts';
import { type Operation, PRICES } from '#core/jobs/operations.ts';
import type { Caller } from '#core/keys/caller.ts';
import { storageKeys } from '#core/storage-layout.ts';
import { cancelOwnJob } from '#core/use-cases/control-job.ts';
import { listFiles } from '#core/use-cases/list-files.ts';
import { prepareJob } from '#core/use-cases/prepare-job.ts';
import { type Settlement, settleJob } from '#core/use-cases/settle-job.ts';
import { aJob } from './fixtures.ts';
import { memoryStore } from './memory-ports.ts';

const owner: Caller = { kind: 'key', keyId: 'key_1', account: 'key_1', defaults: {} };
const STARTING_BALANCE = 20;
const output = { output_kind: 'image' as const, inference_cached: false, model_version: {} };

/** A store holding one queued job whose price is reserved from an account that had STARTING_BALANCE. */
async function withReservedJob(operation: Operation = 'plate', price: number = PRICES.edit) {
  const store = memoryStore({ key_1: STARTING_BALANCE });
  const job = aJob({ operation, costCredits: price, reservedCredits: price });
  const reservation = {
    account: 'key_1',
    amount: price,
    kind: 'reserve' as const,
    jobId: job.id,
    jobVersion: 1,
  };
  await store.jobs.insert(job, reservation, null);
  return { store, job, balance: () => store.balances.get('key_1') };
}

async function withRunningJob(operation: Operation = 'plate', price: number = PRICES.edit) {
  const world = await withReservedJob(operation, price);
  await prepareJob(world.store, world.job.id);
  return world;
}

const resultFiles = (job: Job) => [
  {
    name: 'result.png',
    key: `${storageKeys.resultPrefix(job.id)}result.png`,
    contentType: 'image/png',
    bytes: 900,
  },
];
const success = (job: Job): Settlement => ({
  jobId: job.id,
  outcome: 'success',
  result: { output, files: resultFiles(job) },
});
const failure = (job: Job): Settlement => ({
  jobId: job.id,
  outcome: 'failure',
  failure: { Error: 'MaskFailedError', Cause: JSON.stringify({ errorMessage: 'No car was found' }) },
});

const charged = (price: number) => ({ available: STARTING_BALANCE - price, reserved: 0, usedTotal: price });
const released = { available: STARTING_BALANCE, reserved: 0, usedTotal: 0 };

describe('prepareJob', () => {
  it('moves a queued job to processing and hands out its work order, keeping the credits reserved', async () => {
    const { store, job, balance } = await withReservedJob();
    const order = await prepareJob(store, job.id);
    expect(order).toMatchObject({
      jobId: job.id,
      operation: job.operation,
      source: { key: job.source.key, contentType: job.source.contentType, sha256: job.source.sha256 },
      resultPrefix: storageKeys.resultPrefix(job.id),
    });
    expect(await store.jobs.get(job.id)).toMatchObject({ status: 'processing', attempts: 1 });
    expect(balance()).toEqual({
      available: STARTING_BALANCE - PRICES.edit,
      reserved: PRICES.edit,
      usedTotal: 0,
    });
  });

  it('hands out the same work order when the step runs again, counting one attempt', async () => {
    const { store, job } = await withReservedJob();
    const first = await prepareJob(store, job.id);
    expect(await prepareJob(store, job.id)).toEqual(first);
    expect((await store.jobs.get(job.id))!.attempts).toBe(1);
  });

  it('stops a job cancelled while queued, whose credits its cancellation already gave back once', async () => {
    const { store, job, balance } = await withReservedJob();
    await cancelOwnJob(store, owner, job.id);
    await expect(prepareJob(store, job.id)).rejects.toThrow(JobCancelledError);
    // The workflow's catch settles the stopped job as a failure; that must not give the credits back again.
    const settled = await settleJob(store, failure(job));
    expect(settled.status).toBe('cancelled');
    expect(balance()).toEqual(released);
  });
});

describe('settleJob', () => {
  it.each<[string, Operation, number]>([
    ['an edit', 'plate', PRICES.edit],
    ['an analysis', 'analyze', PRICES.analysis],
  ])('charges exactly the reserved credits for %s that succeeded', async (_, operation, price) => {
    const { store, job, balance } = await withRunningJob(operation, price);
    const settled = await settleJob(store, success(job));
    expect(settled).toMatchObject({ status: 'success', output, chargedCredits: price, error: null });
    expect(balance()).toEqual(charged(price));
  });

  it('gives the reserved credits back to a job that failed, with the error the client sees', async () => {
    const { store, job, balance } = await withRunningJob();
    const settled = await settleJob(store, failure(job));
    expect(settled).toMatchObject({
      status: 'failed',
      chargedCredits: 0,
      output: null,
      error: { code: 802, message: 'No car was found' },
    });
    expect(balance()).toEqual(released);
  });

  it.each<[string, string, typeof success, typeof success, object]>([
    ['success', 'success', success, success, charged(PRICES.edit)],
    ['success', 'failure', success, failure, charged(PRICES.edit)],
    ['failure', 'success', failure, success, released],
    ['failure', 'failure', failure, failure, released],
  ])(
    'settles %s then %s with the credits moved once, by the first',
    async (_a, _b, first, second, expected) => {
      const { store, job, balance } = await withRunningJob();
      const settled = await settleJob(store, first(job));
      expect(await settleJob(store, second(job))).toEqual(settled);
      expect(balance()).toEqual(expected);
    },
  );

  it('moves the credits once when a success and a failure settle at the same moment', async () => {
    const { store, job, balance } = await withRunningJob();
    const [a, b] = await Promise.all([settleJob(store, success(job)), settleJob(store, failure(job))]);
    expect(a).toEqual(b);
    expect(balance()).toEqual(a.status === 'success' ? charged(PRICES.edit) : released);
  });

  it('lists the result files of a success among the owner’s files once, even when settled twice', async () => {
    const { store, job } = await withRunningJob();
    await settleJob(store, success(job));
    await settleJob(store, success(job));
    const { files } = await listFiles(store, owner, { limit: 10, before: null });
    expect(files.map((file) => [file.jobId, file.name])).toEqual([[job.id, 'result.png']]);
  });

  it('cancels a job whose owner cancelled it while it ran, gives its credits back and lists no results', async () => {
    const { store, job, balance } = await withRunningJob();
    await cancelOwnJob(store, owner, job.id);
    const settled = await settleJob(store, success(job));
    expect(settled).toMatchObject({ status: 'cancelled', output: null, chargedCredits: 0 });
    expect(balance()).toEqual(released);
    expect((await listFiles(store, owner, { limit: 10, before: null })).files).toEqual([]);
  });

  it('settles a master-key job without moving any credits', async () => {
    const store = memoryStore({ key_1: STARTING_BALANCE });
    const job = aJob({ ownerId: 'master', account: null, reservedCredits: 0 });
    await store.jobs.insert(job, null, null);
    await prepareJob(store, job.id);
    expect(await settleJob(store, success(job))).toMatchObject({ status: 'success', chargedCredits: 0 });
    expect(store.balances.get('key_1')).toEqual(released);
  });
});
