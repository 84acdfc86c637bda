import { describe, expect, it } from 'vitest';
import { GoneError, NotFoundError } from '#core/errors.ts';
import { resultPath } from '#core/jobs/envelope.ts';
import { expiredInput, goneFrom, lifecycleDaysOf, resultNames, resultsExpireAt } from '#core/jobs/expiry.ts';
import { STORAGE_PREFIXES } from '#core/storage-layout.ts';
import { resultLink } from '#core/use-cases/result-link.ts';
import { aJob } from './fixtures.ts';
import { memoryObjects, memoryStore } from './memory-ports.ts';

const DAY = 86_400_000;
const CREATED = '2026-11-22T08:00:00.000Z';
const FINISHED = '2026-11-22T08:00:03.000Z';
const daysAfter = (from: string, days: number) => new Date(Date.parse(from) + days * DAY);

const succeeded = aJob({
  createdAt: CREATED,
  status: 'success',
  stage: 'done',
  finishedAt: FINISHED,
  output: {
    url: resultPath(aJob().id, 'result.jpg'),
    mask_url: resultPath(aJob().id, 'plate_mask.png'),
    plate_mask_url: resultPath(aJob().id, 'plate_mask.png'),
    output_kind: 'image',
    inference_cached: false,
    model_version: {},
  },
});

describe('expiry', () => {
  it('takes its days from the same table as the bucket’s lifecycle rules', () => {
    expect(lifecycleDaysOf('sources/job_1/source.jpg')).toBe(STORAGE_PREFIXES.sources.expireDays);
    expect(lifecycleDaysOf('results/job_1/result.jpg')).toBe(STORAGE_PREFIXES.results.expireDays);
    expect(lifecycleDaysOf('keys/key_1/background.png')).toBeNull();
    expect(goneFrom('sources/job_1/source.jpg', CREATED)).toBe('2026-11-29T08:00:00.000Z');
    expect(goneFrom('keys/key_1/background.png', CREATED)).toBeNull();
  });

  it('dates a success’s results 30 days after it finished, and nothing else', () => {
    expect(resultsExpireAt(succeeded)).toBe('2026-12-22T08:00:03.000Z');
    expect(resultNames(succeeded)).toEqual(['result.jpg', 'plate_mask.png']);
    expect(resultsExpireAt(aJob({ status: 'failed', finishedAt: FINISHED }))).toBeNull();
    expect(resultsExpireAt(aJob({ status: 'queued' }))).toBeNull();
    const analysis = {
      analysis: {},
      output_kind: 'analysis' as const,
      inference_cached: false,
      model_version: {},
    };
    expect(resultsExpireAt({ ...succeeded, output: analysis })).toBeNull();
  });

  it('treats a job’s photos as gone from 7 days after its creation on, not a moment before', () => {
    const job = aJob({ createdAt: CREATED, status: 'failed' });
    expect(expiredInput(job, daysAfter(CREATED, 7 - 1 / DAY))).toBeNull();
    expect(expiredInput(job, daysAfter(CREATED, 7))).toEqual({
      key: job.source.key,
      goneFrom: '2026-11-29T08:00:00.000Z',
    });
  });

  it('never expires a background kept on the key, only the job’s own', () => {
    const base = aJob({ createdAt: CREATED });
    const withKeyBackground = { ...base, source: { ...base.source, key: 'keys/k/photo.jpg' } };
    const keyBackground = { ...base.params, backgroundFileKey: 'keys/key_1/background.png' };
    expect(expiredInput({ ...withKeyBackground, params: keyBackground }, daysAfter(CREATED, 365))).toBeNull();
    const ownBackground = { ...base.params, backgroundFileKey: 'sources/x/background.png' };
    expect(
      expiredInput({ ...withKeyBackground, params: ownBackground }, daysAfter(CREATED, 7)),
    ).toMatchObject({
      key: 'sources/x/background.png',
    });
  });
});

describe('a result link (GET /results)', () => {
  function setup(now: Date) {
    const store = memoryStore();
    const bucket = memoryObjects();
    const deps = { ...store, objects: bucket.store, clock: { now: () => now } };
    return { store, bucket, deps };
  }
  const link = (deps: Parameters<typeof resultLink>[0], name = 'result.jpg') =>
    resultLink(deps, succeeded.id, name, 900);

  it('presigns a stored result until the job’s expires_at', async () => {
    const { store, bucket, deps } = setup(daysAfter(FINISHED, 30 - 1 / DAY));
    await store.jobs.insert(succeeded, null, null);
    bucket.objects.set(`results/${succeeded.id}/result.jpg`, Buffer.from('jpeg'));
    await expect(link(deps)).resolves.toBe(
      `https://storage.test/results/${succeeded.id}/result.jpg?expires=900`,
    );
  });

  it('answers 410 from expires_at on, though the bucket has not removed the file yet', async () => {
    const { store, bucket, deps } = setup(daysAfter(FINISHED, 30));
    await store.jobs.insert(succeeded, null, null);
    bucket.objects.set(`results/${succeeded.id}/result.jpg`, Buffer.from('jpeg'));
    const refused = await link(deps).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GoneError);
    expect((refused as GoneError).message).toBe(
      'This result expired at 2026-12-22T08:00:03.000Z and is deleted: results are kept 30 days after the job finished',
    );
  });

  it('answers 410 for a file no longer stored, and 404 for a name the job never produced', async () => {
    const { store, deps } = setup(daysAfter(FINISHED, 1));
    await store.jobs.insert(succeeded, null, null);
    await expect(link(deps)).rejects.toThrow(GoneError);
    await expect(link(deps, 'result.png')).rejects.toThrow(NotFoundError);
    await expect(resultLink(deps, 'job_unknown', 'result.jpg', 900)).rejects.toThrow(NotFoundError);
  });

  it('tells a registered result from one its owner deleted by the file record, without asking storage', async () => {
    const { store, bucket, deps } = setup(daysAfter(FINISHED, 1));
    await store.jobs.insert(succeeded, null, null);
    const asked: string[] = [];
    const objects = {
      ...bucket.store,
      exists: async (key: string) => {
        asked.push(key);
        return bucket.store.exists(key);
      },
    };
    const record = (fileId: number, name: string) => ({
      fileId,
      ownerId: succeeded.ownerId,
      kind: 'result' as const,
      name,
      contentType: 'image/png',
      bytes: 4,
      key: `results/${succeeded.id}/${name}`,
      url: resultPath(succeeded.id, name),
      jobId: succeeded.id,
      assetId: null,
      createdAt: FINISHED,
      expiresAt: daysAfter(FINISHED, 30).toISOString(),
    });
    const [kept, deleted] = [record(1, 'result.jpg'), record(2, 'plate_mask.png')];
    for (const file of [kept, deleted]) {
      await store.files.insertResult(file);
      bucket.objects.set(file.key, Buffer.from('png'));
    }
    await store.files.delete(deleted);
    const counted = { ...deps, objects };
    await expect(resultLink(counted, succeeded.id, 'result.jpg', 900)).resolves.toContain(kept.key);
    // The bytes are still there (the deletion of the object failed, say): the owner's deletion stands.
    await expect(resultLink(counted, succeeded.id, 'plate_mask.png', 900)).rejects.toThrow(GoneError);
    expect(asked).toEqual([]);
  });

  it('answers a job id or a name the service never issues with the same 404, reading nothing', async () => {
    const { deps } = setup(daysAfter(FINISHED, 1));
    const reads: string[] = [];
    const jobs = {
      get: async (id: string) => {
        reads.push(id);
        return null;
      },
    };
    const counted = { ...deps, jobs };
    for (const [jobId, name] of [
      ['job_unknown', 'result.jpg'],
      [succeeded.id, 'result.gif'],
      [succeeded.id, 'Result.jpg'],
    ] as const) {
      await expect(resultLink(counted, jobId, name, 900)).rejects.toThrow(
        new NotFoundError('No such result'),
      );
    }
    expect(reads).toEqual([]);
  });
});
