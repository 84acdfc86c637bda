import { describe, expect, it } from 'vitest';
import { openZipBuffer, yazlArchives, zipBuffer } from '#aws/zip-archives.ts';
import { type Batch, batchCounts, batchResource } from '#core/batches/batch.ts';
import { parseBatchRequest } from '#core/batches/input.ts';
import {
  cancelBatch,
  completeBatch,
  pauseBatch,
  resumeBatch,
  retryBatch,
  startNextItem,
} from '#core/batches/transitions.ts';
import {
  BadRequestError,
  ConflictError,
  InsufficientCreditsError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '#core/errors.ts';
import { resultPath } from '#core/jobs/envelope.ts';
import type { Job } from '#core/jobs/job.ts';
import type { Caller } from '#core/keys/caller.ts';
import { DEFAULT_ZIP_LIMITS, zipBudget } from '#core/limits/archive.ts';
import type { AccountRepository, ArchiveReader, ArchiveWorkflow } from '#core/ports.ts';
import { storageKeys } from '#core/storage-layout.ts';
import { advanceBatch } from '#core/use-cases/advance-batch.ts';
import { controlBatch, readBatch } from '#core/use-cases/control-batch.ts';
import { retryOwnJob } from '#core/use-cases/control-job.ts';
import { createBatch } from '#core/use-cases/create-batch.ts';
import { buildDownload, downloadBatch } from '#core/use-cases/download-batch.ts';
import { notifyBatchFinished } from '#core/use-cases/notify-batch.ts';
import { prepareJob } from '#core/use-cases/prepare-job.ts';
import { settleJob } from '#core/use-cases/settle-job.ts';
import { unpackBatch } from '#core/use-cases/unpack-batch.ts';
import { verifySignature } from '#core/webhooks/signature.ts';
import { sharedResponseSchemas as responseSchemas } from '#http/schemas/shared.ts';
import { memoryBatches, memoryObjects } from './memory-batches.ts';
import { memoryStore } from './memory-ports.ts';

const owner: Caller = { kind: 'key', keyId: 'key_1', account: 'key_1', defaults: {} };
const stranger: Caller = { kind: 'key', keyId: 'key_2', account: 'key_2', defaults: {} };

/** Bytes that sniff as a JPEG; what they show does not matter to the batch. */
const jpeg = (seed: number) =>
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Array.from({ length: 64 }, (_, i) => (i * seed) % 256)]);

async function archiveOf(files: Record<string, Buffer>): Promise<Buffer> {
  return zipBuffer(Object.entries(files).map(([name, data]) => ({ name, data, compress: true })));
}

/** Photos `p0.jpg` … in folders `a/` and `b/`, as an upload. */
async function photos(count: number) {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) files[`${i % 2 ? 'b' : 'a'}/p${i}.jpg`] = jpeg(i + 1);
  return {
    kind: 'file' as const,
    file: { bytes: await archiveOf(files), filename: 'photos.zip', contentType: 'application/zip' },
  };
}

function setup(credits = 100, options: { concurrency?: number; maxInFlight?: number } = {}) {
  const store = memoryStore({ key_1: credits, key_2: credits });
  const batches = memoryBatches(store, options.maxInFlight);
  const objects = memoryObjects();
  const finished: Batch[] = [];
  const accounts: AccountRepository = {
    async get(account) {
      return store.balances.get(account) ?? null;
    },
    async open() {
      return false;
    },
    async ledger() {
      return [];
    },
  };
  // Archives are read from the stored object with yauzl, as the S3 adapter does by ranges.
  const archives: ArchiveReader = {
    open: async (key, limits) => openZipBuffer(await objects.store.get(key), limits),
  };
  // The archive workflow runs its task at once, inside the start call.
  const archiveWorkflow: ArchiveWorkflow = {
    async start(_name, task) {
      if (task.task === 'unpack') await unpackBatch(deps, task.batchId);
      else await buildDownload(deps, task.batchId);
      return 'succeeded';
    },
  };
  const deps = {
    ...store,
    batches: batches.repository,
    objects: objects.store,
    accounts,
    archives,
    archiveWorkflow,
    zip: yazlArchives,
    maxSourceBytes: 20 * 1024 * 1024,
    batchConcurrency: options.concurrency ?? 2,
    batchFinished: async (batch: Batch) => {
      finished.push(batch);
    },
  };
  const settleDeps = {
    ...deps,
    advanceBatch: (batchId: string, settled: Job) => advanceBatch(deps, batchId, { settled }),
  };
  let next = 0;

  /**
   * Play the job workflow for every execution started so far, in start order, as Step Functions would:
   * prepare, then settle with the outcome `decide` picks (a success stores its result file).
   */
  async function runStarted(
    decide: (name: string) => 'success' | 'failure' = () => 'success',
    limit = Infinity,
  ) {
    let ran = 0;
    while (next < store.started.length && ran < limit) {
      const { jobId } = store.started[next++]!;
      ran++;
      let name = '';
      try {
        const order = await prepareJob(store, jobId);
        const job = store.stored.get(jobId)!;
        name = (await batches.repository.item(job.batch!.id, job.batch!.item))!.name;
        if (decide(name) === 'failure')
          throw Object.assign(new Error('no plate'), { name: 'PlateNotFoundError' });
        const key = `${order.resultPrefix}result.jpg`;
        await objects.store.put(key, jpeg(99), 'image/jpeg');
        await settleJob(settleDeps, {
          jobId,
          outcome: 'success',
          result: {
            output: {
              url: resultPath(jobId, 'result.jpg'),
              output_kind: 'image',
              inference_cached: false,
              model_version: {},
            },
            files: [{ name: 'result.jpg', key, contentType: 'image/jpeg', bytes: 70 }],
          },
        });
      } catch (error) {
        const failure = {
          Error: (error as Error).name,
          Cause: JSON.stringify({ errorMessage: (error as Error).message }),
        };
        await settleJob(settleDeps, { jobId, outcome: 'failure', failure });
      }
    }
    return ran;
  }

  const balance = () => store.balances.get('key_1')!;
  return { store, batches, objects, deps, settleDeps, finished, runStarted, balance };
}

function aBatch(overrides: Partial<Batch> = {}): Batch {
  return {
    id: 'bat_0123456789abcdefghjkmnpq',
    ownerId: 'key_1',
    account: 'key_1',
    operation: 'plate',
    params: {
      plateColor: '#141414',
      plateSmoothing: true,
      plateMaskOnly: false,
      background: 'studio',
      backgroundFileKey: null,
      webhookUrl: null,
    },
    webhookUrl: null,
    status: 'processing',
    pauseReason: null,
    concurrency: 2,
    archive: { name: 'x.zip', bytes: 10 },
    total: 4,
    skipped: 0,
    queue: [0, 1, 2, 3],
    running: [],
    neverRan: [],
    succeeded: 0,
    failed: 0,
    cancelled: 0,
    chargedCredits: 0,
    revision: 0,
    createdAt: '2026-11-22T08:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    updatedAt: '2026-11-22T08:00:00.000Z',
    version: 1,
    ...overrides,
  };
}

const NOW = '2026-11-22T09:00:00.000Z';
const sumOfCounts = (batch: Batch) => {
  const { total, ...rest } = batchCounts(batch);
  return { total, sum: Object.values(rest).reduce((a, b) => a + b, 0) };
};

describe('batch moves (pure)', () => {
  const processing = aBatch();
  const paused = aBatch({ status: 'paused', pauseReason: 'requested' });
  const completed = aBatch({ status: 'completed', queue: [], succeeded: 3, failed: 1 });
  const cancelled = aBatch({ status: 'cancelled', queue: [], neverRan: [0, 1, 2, 3], cancelled: 4 });

  it('pause: processing → paused; paused stays; finished batches 409', () => {
    expect(pauseBatch(processing)).toMatchObject({ status: 'paused', pauseReason: 'requested' });
    expect(pauseBatch(paused)).toBe(paused);
    expect(() => pauseBatch(completed)).toThrow(ConflictError);
    expect(() => pauseBatch(cancelled)).toThrow(ConflictError);
  });

  it('resume: paused → processing; processing stays; finished batches 409', () => {
    expect(resumeBatch(paused)).toMatchObject({ status: 'processing', pauseReason: null });
    expect(resumeBatch(processing)).toBe(processing);
    expect(() => resumeBatch(completed)).toThrow(ConflictError);
    expect(() => resumeBatch(cancelled)).toThrow(ConflictError);
  });

  it('cancel: waiting items are cancelled without running; cancelled stays; completed 409', () => {
    const started = startNextItem(processing, 'job_a', NOW);
    const after = cancelBatch(started, NOW);
    expect(after).toMatchObject({ status: 'cancelled', queue: [], neverRan: [1, 2, 3], cancelled: 3 });
    expect(after.running).toEqual([{ item: 0, jobId: 'job_a' }]);
    expect(sumOfCounts(after)).toEqual({ total: 4, sum: 4 });
    expect(cancelBatch(cancelled, NOW)).toBe(cancelled);
    expect(() => cancelBatch(completed, NOW)).toThrow(ConflictError);
  });

  it('retry: failed items wait again; a completed batch runs again; no failure or cancelled is 409', () => {
    expect(retryBatch(completed, [3])).toMatchObject({
      status: 'processing',
      queue: [3],
      failed: 0,
      finishedAt: null,
    });
    const pausedWithFailure = aBatch({ status: 'paused', queue: [2], failed: 1 });
    expect(retryBatch(pausedWithFailure, [0])).toMatchObject({ status: 'paused', queue: [2, 0], failed: 0 });
    expect(() => retryBatch(processing, [])).toThrow(/no item has failed/);
    expect(() => retryBatch(cancelled, [0])).toThrow(ConflictError);
  });

  it('completes only when nothing waits or runs', () => {
    expect(() => completeBatch(processing, NOW)).toThrow(ConflictError);
    expect(completeBatch(aBatch({ queue: [] }), NOW)).toMatchObject({ status: 'completed', finishedAt: NOW });
  });
});

describe('createBatch', () => {
  it('stores each photo, reports other entries per item, and starts the first items with a reservation each', async () => {
    const t = setup(100);
    const archive = await archiveOf({
      'front/car1.jpg': jpeg(1),
      'rear/car2.jpg': jpeg(2),
      'notes.txt': Buffer.from('hello'),
      'inner.zip': await archiveOf({ 'x.jpg': jpeg(3) }),
      'side/car3.jpg': jpeg(4),
    });
    const { batch, items } = await createBatch(t.deps, owner, {
      archive: {
        kind: 'file',
        file: { bytes: archive, filename: 'cars.zip', contentType: 'application/zip' },
      },
      operation: 'plate',
      requested: { plateColor: '#ff00ff' },
    });
    expect(batchCounts(batch)).toEqual({
      total: 5,
      skipped: 2,
      queued: 1,
      processing: 2,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
    });
    expect(t.balance()).toEqual({ available: 90, reserved: 10, usedTotal: 0 });
    const resource = batchResource(batch, items);
    expect(resource.items.map((item) => [item.name, item.status, item.error?.code ?? null])).toEqual([
      ['front/car1.jpg', 'processing', null],
      ['rear/car2.jpg', 'processing', null],
      ['notes.txt', 'skipped', 415],
      ['inner.zip', 'skipped', 415],
      ['side/car3.jpg', 'queued', null],
    ]);
    expect(resource.items[3]!.error?.message).toMatch(/Nested archives/);
    expect([...t.objects.objects.keys()].sort()).toEqual([
      `batches/${batch.id}/archive.zip`,
      `batches/${batch.id}/items/0/car1.jpg`,
      `batches/${batch.id}/items/1/car2.jpg`,
      `batches/${batch.id}/items/4/car3.jpg`,
    ]);
    const job = t.store.stored.get(batch.running[0]!.jobId)!;
    expect(job).toMatchObject({
      batch: { id: batch.id, item: 0 },
      reservedCredits: 5,
      params: { plateColor: '#ff00ff', webhookUrl: null },
    });
    expect(t.store.started).toHaveLength(2);
  });

  it('refuses a traversal entry, a zip bomb and a non-ZIP, and stores nothing', async () => {
    const t = setup(100);
    const upload = (bytes: Buffer) => ({
      archive: { kind: 'file' as const, file: { bytes, filename: 'x.zip', contentType: null } },
      operation: 'plate' as const,
      requested: {},
    });
    // yazl refuses to write `..` names: the name is patched in afterwards, as a hostile tool would write it.
    const traversal = await archiveOf({ 'ok.jpg': jpeg(1), 'zz/evil.jpg': jpeg(2) });
    for (let at = traversal.indexOf('zz/evil.jpg'); at >= 0; at = traversal.indexOf('zz/evil.jpg', at))
      traversal.write('..', at, 'latin1');
    await expect(createBatch(t.deps, owner, upload(traversal))).rejects.toThrow(BadRequestError);
    await expect(createBatch(t.deps, owner, upload(Buffer.from('not a zip')))).rejects.toThrow(
      UnsupportedMediaTypeError,
    );
    const bomb = await archiveOf({ 'ok.jpg': jpeg(1), 'bomb.jpg': Buffer.alloc(60 * 1024 * 1024) });
    await expect(createBatch(t.deps, owner, upload(bomb))).rejects.toThrow(PayloadTooLargeError);
    await expect(createBatch(t.deps, owner, upload(bomb))).rejects.toThrow(
      /limit: (entry size|compression ratio)/,
    );
    expect(t.objects.objects.size).toBe(0);
    expect(t.batches.batches.size).toBe(0);
    expect(t.balance().available).toBe(100);
  });

  it('refuses an archive without files (400) and an account that cannot pay one item (402); one without photos completes with every entry skipped', async () => {
    const t = setup(4);
    const file = (bytes: Buffer) => ({
      kind: 'file' as const,
      file: { bytes, filename: null, contentType: null },
    });
    await expect(
      createBatch(t.deps, owner, { archive: await photos(2), operation: 'plate', requested: {} }),
    ).rejects.toThrow(InsufficientCreditsError);
    const rich = setup(10);
    const empty = await archiveOf({ '.DS_Store': Buffer.from('x') });
    await expect(
      createBatch(rich.deps, owner, { archive: file(empty), operation: 'plate', requested: {} }),
    ).rejects.toThrow(BadRequestError);
    const text = await archiveOf({ 'a.txt': Buffer.from('x') });
    const { batch } = await createBatch(rich.deps, owner, {
      archive: file(text),
      operation: 'plate',
      requested: {},
    });
    expect(batch).toMatchObject({ status: 'completed', total: 1, skipped: 1, queue: [] });
    expect(rich.finished.map((b) => b.id)).toEqual([batch.id]);
    expect(rich.balance().available).toBe(10);
  });

  it('gives every item job each option a single job takes, the background file included', async () => {
    const t = setup(100);
    const archive = {
      bytes: (await photos(2)).file.bytes,
      filename: 'p.zip',
      contentType: 'application/zip',
    };
    const request = parseBatchRequest(
      {
        mode: 'studio_background',
        background: 'transparent',
        format: 'webp',
        max_width: '1600',
        framing: 'keep',
        shadow: 'true',
        plate_smoothing: 'raw',
        plate_mask_only: 'on',
      },
      { archive, background_file: { bytes: jpeg(7), filename: 'bg.jpg', contentType: 'image/jpeg' } },
    );
    const { batch } = await createBatch(t.deps, owner, request);
    await t.runStarted();
    const items = [...t.store.stored.values()].filter((job) => job.batch?.id === batch.id);
    expect(items).toHaveLength(2);
    for (const job of items) {
      expect(job.params).toMatchObject({
        background: 'transparent',
        format: 'webp',
        maxWidth: 1600,
        framing: 'keep',
        shadow: true,
        plateSmoothing: false,
        plateMaskOnly: true,
        webhookUrl: null,
      });
      // The inference step reads the background from this key, stored with the batch.
      expect(await t.objects.store.get(job.params.backgroundFileKey!)).toEqual(jpeg(7));
    }
  });

  it('refuses what a job refuses: a JPEG with transparency, a width out of range, a background that is no image', async () => {
    const archive = { bytes: Buffer.alloc(1), filename: null, contentType: null };
    expect(() => parseBatchRequest({ background: 'transparent', format: 'jpg' }, { archive })).toThrow(
      /alpha|transparen/,
    );
    expect(() => parseBatchRequest({ max_width: '10' }, { archive })).toThrow(/max_width/);
    const t = setup(100);
    await expect(
      createBatch(t.deps, owner, {
        archive: await photos(1),
        operation: 'background',
        requested: {},
        backgroundFile: { bytes: Buffer.from('not an image'), filename: null, contentType: null },
      }),
    ).rejects.toMatchObject({ status: 415 });
  });

  it('parses the form: analyze is refused, the archive is required, plate_color names are resolved', () => {
    const archive = { bytes: Buffer.alloc(1), filename: null, contentType: null };
    expect(() => parseBatchRequest({ mode: 'analyze' }, { archive })).toThrow(/analyze is not accepted/);
    expect(() => parseBatchRequest({}, {})).toThrow(/archive/);
    expect(() => parseBatchRequest({ upload_id: 'upl_x' }, { archive })).toThrow(/exactly one/);
    expect(parseBatchRequest({ upload_id: 'upl_x' }, {})).toMatchObject({
      archive: { kind: 'upload', uploadId: 'upl_x' },
    });
    expect(parseBatchRequest({ mode: '', plate_color: 'white' }, { archive })).toMatchObject({
      operation: 'plate',
      requested: { plateColor: '#ffffff' },
    });
  });
});

describe('advanceBatch with the job workflow', () => {
  it('runs every photo to the end, at most `concurrency` at once, and charges 5 per success', async () => {
    const t = setup(100, { concurrency: 3 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(8),
      operation: 'plate',
      requested: {},
    });
    let maxRunning = 0;
    const original = t.batches.repository.update;
    t.batches.repository.update = async (before, after, item) => {
      maxRunning = Math.max(maxRunning, after.running.length);
      return original(before, after, item);
    };
    await t.runStarted((name) => (name === 'b/p3.jpg' ? 'failure' : 'success'));
    const done = (await t.batches.repository.get(batch.id))!;
    expect(done).toMatchObject({ status: 'completed', succeeded: 7, failed: 1, chargedCredits: 35 });
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(t.balance()).toEqual({ available: 65, reserved: 0, usedTotal: 35 });
    expect(t.finished.map((b) => b.status)).toEqual(['completed']);
    const { items } = await readBatch(t.deps, owner, batch.id);
    const failed = batchResource(done, items).items.find((item) => item.status === 'failed')!;
    expect(failed).toMatchObject({
      name: 'b/p3.jpg',
      error: { code: 803, message: 'no plate' },
      result: null,
    });
  });

  it('pause stops starting items and lets the running ones finish; resume continues', async () => {
    const t = setup(100, { concurrency: 2 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(6),
      operation: 'plate',
      requested: {},
    });
    await controlBatch(t.deps, owner, batch.id, 'pause');
    await t.runStarted();
    const paused = (await t.batches.repository.get(batch.id))!;
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'requested', succeeded: 2 });
    expect(paused.queue).toHaveLength(4);
    expect(t.balance()).toEqual({ available: 90, reserved: 0, usedTotal: 10 });

    const resumed = await controlBatch(t.deps, owner, batch.id, 'resume');
    expect(resumed.batch).toMatchObject({ status: 'processing', pauseReason: null });
    expect(resumed.batch.running).toHaveLength(2);
    await t.runStarted();
    expect(await t.batches.repository.get(batch.id)).toMatchObject({ status: 'completed', succeeded: 6 });
    expect(t.balance()).toEqual({ available: 70, reserved: 0, usedTotal: 30 });
  });

  it('cancel releases the running items’ reservations and never reserves for the waiting ones', async () => {
    const t = setup(100, { concurrency: 2 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(6),
      operation: 'plate',
      requested: {},
    });
    await t.runStarted(() => 'success', 1); // one item succeeds, the next one starts
    // One running job is still queued, one is processing when the cancel arrives.
    const processingJob = t.store.started[t.store.started.length - 1]!.jobId;
    await prepareJob(t.store, processingJob);
    const { batch: cancelled } = await controlBatch(t.deps, owner, batch.id, 'cancel');
    expect(cancelled.status).toBe('cancelled');
    expect(t.finished).toEqual([]); // told once the last running item has ended
    await t.runStarted();
    const final = (await t.batches.repository.get(batch.id))!;
    expect(batchCounts(final)).toMatchObject({ succeeded: 1, cancelled: 5, queued: 0, processing: 0 });
    expect(t.balance()).toEqual({ available: 95, reserved: 0, usedTotal: 5 });
    expect(t.store.stored.size).toBe(3); // three items ever started: nothing reserved for the other three
    expect(t.finished.map((b) => b.status)).toEqual(['cancelled']);
    await expect(controlBatch(t.deps, owner, batch.id, 'resume')).rejects.toThrow(ConflictError);
    expect((await controlBatch(t.deps, owner, batch.id, 'cancel')).batch.status).toBe('cancelled');
  });

  it('retry runs only the failed items again, each as a new job with a new reservation', async () => {
    const t = setup(100, { concurrency: 2 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(5),
      operation: 'plate',
      requested: {},
    });
    const failing = new Set(['b/p1.jpg', 'a/p4.jpg']);
    await t.runStarted((name) => (failing.has(name) ? 'failure' : 'success'));
    const first = await readBatch(t.deps, owner, batch.id);
    expect(first.batch).toMatchObject({ status: 'completed', succeeded: 3, failed: 2 });
    const jobsBefore = new Set(t.store.stored.keys());
    const successJobs = first.items
      .filter((item) => item.outcome?.status === 'succeeded')
      .map((item) => item.outcome!.jobId);

    const retried = await controlBatch(t.deps, owner, batch.id, 'retry');
    expect(retried.batch).toMatchObject({ status: 'processing', failed: 0 });
    const newJobs = [...t.store.stored.values()].filter((job) => !jobsBefore.has(job.id));
    expect(newJobs.map((job) => job.batch!.item).sort()).toEqual([1, 4]);
    expect(t.balance()).toEqual({ available: 75, reserved: 10, usedTotal: 15 });
    await t.runStarted();
    const after = await readBatch(t.deps, owner, batch.id);
    expect(after.batch).toMatchObject({ status: 'completed', succeeded: 5, failed: 0, chargedCredits: 25 });
    for (const jobId of successJobs)
      expect(after.items.some((item) => item.outcome?.jobId === jobId)).toBe(true);
    expect(after.items.find((item) => item.index === 1)!.attempts).toBe(2);
    expect(t.balance()).toEqual({ available: 75, reserved: 0, usedTotal: 25 });
    await expect(controlBatch(t.deps, owner, batch.id, 'retry')).rejects.toThrow(/no item has failed/);
    // The item's job itself is not retried through the job route (spec 3: standalone jobs only).
    await expect(retryOwnJob(t.deps, owner, newJobs[0]!.id)).rejects.toThrow(ConflictError);
  });

  it('pauses on a 402 mid-batch instead of failing the rest, and resumes once credits are there', async () => {
    const t = setup(12, { concurrency: 2 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(4),
      operation: 'plate',
      requested: {},
    });
    expect(batch.running).toHaveLength(2);
    await t.runStarted();
    const paused = (await t.batches.repository.get(batch.id))!;
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'insufficient_credits', succeeded: 2 });
    expect(paused.queue).toHaveLength(2);
    expect(t.balance()).toEqual({ available: 2, reserved: 0, usedTotal: 10 });
    // Still short: the resume pauses again at once and says why.
    expect((await controlBatch(t.deps, owner, batch.id, 'resume')).batch.pauseReason).toBe(
      'insufficient_credits',
    );
    t.store.balances.set('key_1', { ...t.balance(), available: 20 });
    await controlBatch(t.deps, owner, batch.id, 'resume');
    await t.runStarted();
    expect(await t.batches.repository.get(batch.id)).toMatchObject({
      status: 'completed',
      succeeded: 4,
      chargedCredits: 20,
    });
  });

  it('pauses with too_many_jobs when the account’s other jobs hold every slot', async () => {
    const t = setup(100, { concurrency: 2, maxInFlight: 0 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(2),
      operation: 'plate',
      requested: {},
    });
    expect(batch).toMatchObject({ status: 'paused', pauseReason: 'too_many_jobs' });
    expect(t.balance().available).toBe(100);
  });

  it('never starts an item twice when advances run concurrently', async () => {
    const t = setup(100, { concurrency: 3 });
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(9),
      operation: 'plate',
      requested: {},
    });
    await Promise.all([t.runStarted(), advanceBatch(t.deps, batch.id), advanceBatch(t.deps, batch.id)]);
    await t.runStarted();
    const done = (await t.batches.repository.get(batch.id))!;
    expect(done).toMatchObject({ status: 'completed', succeeded: 9 });
    expect(t.store.stored.size).toBe(9);
    expect(t.balance()).toEqual({ available: 55, reserved: 0, usedTotal: 45 });
  });

  it('keeps another owner out with 404', async () => {
    const t = setup(100);
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(1),
      operation: 'plate',
      requested: {},
    });
    await expect(readBatch(t.deps, stranger, batch.id)).rejects.toThrow(NotFoundError);
    await expect(controlBatch(t.deps, stranger, batch.id, 'pause')).rejects.toThrow(NotFoundError);
    await expect(readBatch(t.deps, owner, 'bat_nope')).rejects.toThrow(NotFoundError);
  });
});

describe('the Batch resource', () => {
  it('is what the OpenAPI document says, field for field', async () => {
    const t = setup(100);
    const archive = await archiveOf({ 'a/p.jpg': jpeg(1), 'notes.txt': Buffer.from('x') });
    const { batch, items } = await createBatch(t.deps, owner, {
      archive: { kind: 'file', file: { bytes: archive, filename: 'x.zip', contentType: null } },
      operation: 'plate',
      requested: {},
    });
    await t.runStarted();
    const resource = batchResource(
      (await t.batches.repository.get(batch.id))!,
      await t.batches.repository.items(batch.id),
    );
    const schema = responseSchemas.Batch;
    expect(Object.keys(schema.shape).sort()).toEqual(Object.keys(resource).sort());
    expect(Object.keys(responseSchemas.BatchItem.shape).sort()).toEqual(
      Object.keys(resource.items[0]!).sort(),
    );
    expect(schema.safeParse(resource).success).toBe(true);
    expect(schema.safeParse(batchResource(batch, items)).success).toBe(true);
  });
});

/** A batch of two, one at a time, whose first item's job has ended without its settlement's batch step. */
async function batchWithLostStep() {
  const t = setup(100, { concurrency: 1 });
  const { batch } = await createBatch(t.deps, owner, {
    archive: await photos(2),
    operation: 'plate',
    requested: {},
  });
  const jobId = batch.running[0]!.jobId;
  await prepareJob(t.store, jobId);
  await settleJob(t.store, { jobId, outcome: 'failure' }); // the settlement's batch step is lost
  const later = { ...t.deps, clock: { now: () => new Date(Date.parse('2026-11-22T08:01:00.000Z')) } };
  return { t, batch, jobId, later };
}

describe('a lost step', () => {
  it('is made up when the batch is read after a quiet while', async () => {
    const { t, batch, jobId, later } = await batchWithLostStep();
    expect((await readBatch(t.deps, owner, batch.id)).batch.running[0]!.jobId).toBe(jobId); // too early to tell
    const healed = await readBatch(later, owner, batch.id);
    expect(healed.batch).toMatchObject({ failed: 1 });
    expect(healed.batch.running[0]!.jobId).not.toBe(jobId);
  });
});

describe('reading a batch that other writers keep moving', () => {
  it('answers the batch as read instead of failing when its heal keeps losing the race', async () => {
    const { batch, jobId, later } = await batchWithLostStep();
    // Every write loses to another writer.
    const contended = { ...later, batches: { ...later.batches, update: async () => false } };
    const read = await readBatch(contended, owner, batch.id);
    expect(read.batch.running[0]!.jobId).toBe(jobId);
    expect(read.items).toHaveLength(2);
  });
});

describe('reading a batch whose running item has no job to be found', () => {
  it('answers the batch, not a 404 about the job', async () => {
    const { batch, jobId, later } = await batchWithLostStep();
    const blind = { ...later, jobs: { ...later.jobs, get: async () => null } };
    const read = await readBatch(blind, owner, batch.id);
    expect(read.batch.running[0]!.jobId).toBe(jobId);
  });
});

describe('downloadBatch', () => {
  it('answers 409 while processing without partial, and while nothing has succeeded', async () => {
    const t = setup(100);
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(3),
      operation: 'plate',
      requested: {},
    });
    await expect(downloadBatch(t.deps, owner, batch.id, { partial: false })).rejects.toThrow(/partial=true/);
    await expect(downloadBatch(t.deps, owner, batch.id, { partial: true })).rejects.toThrow(
      /no item has succeeded/,
    );
  });

  it('streams the results with their folders and a manifest that matches the batch', async () => {
    const t = setup(100);
    const archive = await archiveOf({
      'front/car1.jpg': jpeg(1),
      'front/car1.jpeg': jpeg(2),
      'rear/car2.png': jpeg(3),
      'readme.txt': Buffer.from('hi'),
    });
    const { batch } = await createBatch(t.deps, owner, {
      archive: { kind: 'file', file: { bytes: archive, filename: null, contentType: null } },
      operation: 'plate',
      requested: {},
    });
    await t.runStarted((name) => (name === 'rear/car2.png' ? 'failure' : 'success'));
    const answer = await downloadBatch(t.deps, owner, batch.id, { partial: false });
    if (!answer.ready) throw new Error('the download was built inside the start call');
    const { url, key } = answer;
    expect(url).toContain(key);
    const stored = t.objects.objects.get(key)!;
    expect(stored).toMatchObject({
      contentType: 'application/zip',
      disposition: `attachment; filename="${batch.id}.zip"`,
    });
    const opened = await openZipBuffer(stored.body, DEFAULT_ZIP_LIMITS);
    const listing = opened.listing;
    expect(listing.files.map((entry) => entry.name)).toEqual([
      'front/car1.jpg',
      'front/car1-2.jpg',
      'manifest.json',
    ]);
    const budget = zipBudget(DEFAULT_ZIP_LIMITS);
    const files: Record<string, Buffer> = {};
    for (const entry of listing.files) {
      const chunks: Buffer[] = [];
      for await (const chunk of opened.entry(entry, budget)) chunks.push(chunk);
      files[entry.name] = Buffer.concat(chunks);
    }
    expect(files['front/car1.jpg']!.equals(jpeg(99))).toBe(true);
    const manifest = JSON.parse(files['manifest.json']!.toString());
    const { batch: read, items } = await readBatch(t.deps, owner, batch.id);
    const resource = batchResource(read, items);
    expect(manifest).toMatchObject({
      batch_id: batch.id,
      status: 'completed',
      partial: false,
      counts: resource.counts,
    });
    expect(manifest.items).toEqual(
      resource.items.map((item) => ({
        name: item.name,
        status: item.status,
        job_id: item.job_id,
        outputs: item.status === 'succeeded' ? [expect.stringMatching(/^front\/car1(-2)?\.jpg$/)] : [],
        error: item.error,
      })),
    );
    // The same state is built once.
    const again = await downloadBatch(t.deps, owner, batch.id, { partial: false });
    expect(again).toMatchObject({ ready: true, key });
  });

  it('leaves out a result deleted before the archive is built, and its manifest entry says 410', async () => {
    const t = setup(100);
    const archive = await archiveOf({ 'a.jpg': jpeg(1), 'b.jpg': jpeg(2) });
    const { batch } = await createBatch(t.deps, owner, {
      archive: { kind: 'file', file: { bytes: archive, filename: null, contentType: null } },
      operation: 'plate',
      requested: {},
    });
    await t.runStarted();
    const { items } = await readBatch(t.deps, owner, batch.id);
    const gone = items.find((item) => item.name === 'b.jpg')!;
    t.objects.objects.delete(storageKeys.result(gone.outcome!.jobId, 'result.jpg'));
    const answer = await downloadBatch(t.deps, owner, batch.id, { partial: false });
    if (!answer.ready) throw new Error('the download was built inside the start call');
    const opened = await openZipBuffer(t.objects.objects.get(answer.key)!.body, DEFAULT_ZIP_LIMITS);
    expect(opened.listing.files.map((entry) => entry.name)).toEqual(['a.jpg', 'manifest.json']);
    const chunks: Buffer[] = [];
    const manifestEntry = opened.listing.files.find((entry) => entry.name === 'manifest.json')!;
    for await (const chunk of opened.entry(manifestEntry, zipBudget(DEFAULT_ZIP_LIMITS))) chunks.push(chunk);
    expect(JSON.parse(Buffer.concat(chunks).toString()).items).toEqual([
      expect.objectContaining({ name: 'a.jpg', status: 'succeeded', outputs: ['a.jpg'], error: null }),
      expect.objectContaining({
        name: 'b.jpg',
        status: 'succeeded',
        outputs: [],
        error: { code: 410, message: 'The result is no longer stored' },
      }),
    ]);
  });
});

describe('settleJob', () => {
  it('advances the batch of a batch item, and works without the hook', async () => {
    const { t, batch, jobId } = await batchWithLostStep(); // settled with no hook: the batch is not moved
    expect((await t.batches.repository.get(batch.id))!.running[0]!.jobId).toBe(jobId);
    await settleJob(t.settleDeps, { jobId, outcome: 'failure' }); // repeated settlement with the hook
    const moved = (await t.batches.repository.get(batch.id))!;
    expect(moved).toMatchObject({ failed: 1 });
    expect(moved.running[0]!.jobId).not.toBe(jobId);
  });
});

describe('batch webhook', () => {
  it('sends the final batch once, signed like job webhooks', async () => {
    const t = setup(100);
    const { batch } = await createBatch(t.deps, owner, {
      archive: await photos(1),
      operation: 'plate',
      requested: {},
    });
    await t.runStarted();
    const done = {
      ...(await t.batches.repository.get(batch.id))!,
      webhookUrl: 'https://hooks.example/batches',
    };
    const sent: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
    const secret = 'whsec_test';
    const result = await notifyBatchFinished(
      {
        batches: t.batches.repository,
        clock: t.store.clock,
        webhookSecrets: {
          async get() {
            return { secrets: [{ secret, createdAt: '2026-01-01T00:00:00.000Z' }], version: 1 };
          },
          async replace() {
            return true;
          },
        },
        webhooks: {
          async post(url, headers, body) {
            sent.push({ url, headers, body });
            return { statusCode: 204, error: null, latencyMs: 1 };
          },
        },
      },
      done,
    );
    expect(result).toMatchObject({ event: 'batch.completed', statusCode: 204 });
    expect(sent[0]!.headers).toMatchObject({
      'X-Service-Batch': batch.id,
      'X-Service-Event': 'batch.completed',
    });
    expect(JSON.parse(sent[0]!.body).batch).toMatchObject({ id: batch.id, status: 'completed' });
    expect(
      verifySignature({
        header: sent[0]!.headers['X-Service-Signature'],
        body: sent[0]!.body,
        secret,
        nowSeconds: Math.floor(t.store.clock.now().getTime() / 1000),
      }),
    ).toBe(true);
  });
});
