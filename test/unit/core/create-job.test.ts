import { describe, expect, it } from 'vitest';
import type { CreditAccount } from '#core/credits/credits.ts';
import {
  BadRequestError,
  ConflictError,
  InsufficientCreditsError,
  PayloadTooLargeError,
  SourceImageError,
  TransientError,
  UnsupportedMediaTypeError,
} from '#core/errors.ts';
import type { Asset } from '#core/files/asset-record.ts';
import type { JobRequest, UploadedFile } from '#core/jobs/input.ts';
import type { JobRoute } from '#core/jobs/job.ts';
import { OPERATION_NAMES, OPERATION_REGISTRY, type Operation, PRICES } from '#core/jobs/operations.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { AccountRepository, AssetRepository, WorkflowStarter } from '#core/ports.ts';
import { type CreateJobDeps, createJob } from '#core/use-cases/create-job.ts';
import { prepareJob } from '#core/use-cases/prepare-job.ts';
import { settleJob } from '#core/use-cases/settle-job.ts';
import { pngClaiming } from './fixtures.ts';
import { memoryObjects, memoryStore } from './memory-ports.ts';

const owner: Caller = { kind: 'key', keyId: 'key_1', account: 'key_1', defaults: {} };
const otherKey: Caller = { kind: 'key', keyId: 'key_2', account: 'key_2', defaults: {} };
const guest: Caller = { kind: 'guest', sessionId: 'sess_1', account: 'trial_1' };
const master: Caller = { kind: 'master' };
const STARTING_BALANCE = 20;
const MAX_SOURCE_BYTES = 4096;

const priceOf = (operation: Operation) =>
  OPERATION_REGISTRY[operation].price === 'analysis' ? PRICES.analysis : PRICES.edit;

const png = (width = 640, height = 480) => pngClaiming(width, height);

const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');

const fileOf = (bytes: Buffer, filename = 'car.png'): UploadedFile => ({
  bytes,
  filename,
  contentType: 'image/png',
});

function uploadRequest(
  operation: Operation = 'plate',
  bytes: Buffer = png(),
  overrides: Partial<JobRequest> = {},
): JobRequest {
  return {
    operation,
    source: { kind: 'file', file: fileOf(bytes) },
    requested: {},
    backgroundFile: null,
    ...overrides,
  };
}

/** Reads the balances the job repository moves, so a 402 check and a reservation see the same account. */
function memoryAccounts(balances: Map<string, CreditAccount>): AccountRepository {
  return {
    async get(account) {
      return balances.get(account) ?? null;
    },
    async open(account, credits) {
      if (balances.has(account)) return false;
      balances.set(account, { available: credits, reserved: 0, usedTotal: 0 });
      return true;
    },
    async ledger() {
      throw new Error('the in-memory store keeps balances, not a ledger');
    },
  };
}

function memoryAssets(): AssetRepository {
  const assets = new Map<string, Asset>();
  return {
    async insert(asset) {
      assets.set(asset.id, asset);
    },
    async get(assetId) {
      return assets.get(assetId) ?? null;
    },
  };
}

function world(balances: Record<string, number> = { key_1: STARTING_BALANCE }, maxInFlight = Infinity) {
  const store = memoryStore(balances, { maxInFlight });
  const storage = memoryObjects();
  const web = new Map<string, UploadedFile>();
  const downloads: string[] = [];
  const deps: CreateJobDeps = {
    jobs: store.jobs,
    accounts: memoryAccounts(store.balances),
    workflow: store.workflow,
    clock: store.clock,
    objects: storage.store,
    assets: memoryAssets(),
    maxSourceBytes: MAX_SOURCE_BYTES,
    allowLoopback: false,
    async fetchSource(url) {
      downloads.push(url);
      const file = web.get(url);
      if (!file) throw new SourceImageError(`Nothing could be downloaded from ${url}`);
      return file;
    },
  };
  const create = (
    caller: Caller,
    request: JobRequest,
    idempotencyKey: string | null = null,
    route: JobRoute = 'jobs',
  ) => createJob(deps, caller, request, { route, idempotencyKey });
  return {
    store,
    deps,
    web,
    downloads,
    objects: storage.objects,
    create,
    balanceOf: (account: string) => store.balances.get(account),
  };
}

const untouched = { available: STARTING_BALANCE, reserved: 0, usedTotal: 0 };

describe('createJob: price', () => {
  it.each(OPERATION_NAMES)(
    'reserves the price of %s from the balance and starts one workflow',
    async (operation) => {
      const w = world();
      const { status, job } = await w.create(owner, uploadRequest(operation));
      expect(status).toBe(202);
      expect(job).toMatchObject({
        status: 'queued',
        operation,
        account: 'key_1',
        costCredits: priceOf(operation),
        reservedCredits: priceOf(operation),
        chargedCredits: 0,
      });
      expect(w.balanceOf('key_1')).toEqual({
        available: STARTING_BALANCE - priceOf(operation),
        reserved: priceOf(operation),
        usedTotal: 0,
      });
      expect(await w.store.jobs.get(job.id)).toEqual(job);
      expect(w.store.started).toEqual([{ jobId: job.id, attempt: 1 }]);
    },
  );

  it('reserves less for an analysis than for an edit', async () => {
    const w = world();
    const edit = await w.create(owner, uploadRequest('plate'));
    const analysis = await w.create(owner, uploadRequest('analyze'), null, 'analyze');
    expect(edit.job.reservedCredits).toBe(PRICES.edit);
    expect(analysis.job.reservedCredits).toBe(PRICES.analysis);
    expect(w.balanceOf('key_1')!.reserved).toBe(PRICES.edit + PRICES.analysis);
  });

  it('accepts a balance of exactly the price and leaves it at zero', async () => {
    const w = world({ key_1: PRICES.edit });
    await w.create(owner, uploadRequest('plate'));
    expect(w.balanceOf('key_1')).toEqual({ available: 0, reserved: PRICES.edit, usedTotal: 0 });
  });

  it('stores the photo under the job, where the workflow reads it', async () => {
    const w = world();
    const photo = png();
    const { job } = await w.create(owner, uploadRequest('plate', photo));
    expect(job.source).toMatchObject({
      contentType: 'image/png',
      bytes: photo.length,
      originalName: 'car.png',
    });
    expect(w.objects.get(job.source.key)?.equals(photo)).toBe(true);
  });
});

describe('createJob: not enough credits', () => {
  it('refuses with 402 a caller one credit short, storing, reserving and starting nothing', async () => {
    const w = world({ key_1: PRICES.edit - 1 });
    await expect(w.create(owner, uploadRequest('plate'))).rejects.toMatchObject({ status: 402, code: 402 });
    expect(w.balanceOf('key_1')).toEqual({ available: PRICES.edit - 1, reserved: 0, usedTotal: 0 });
    expect(w.store.stored.size).toBe(0);
    expect(w.objects.size).toBe(0);
    expect(w.store.started).toEqual([]);
  });

  it('says how many credits the operation needs and how many are available', async () => {
    const w = world({ key_1: PRICES.edit - 1 });
    await expect(w.create(owner, uploadRequest('plate'))).rejects.toThrow(
      `This operation needs ${PRICES.edit} credits; ${PRICES.edit - 1} are available`,
    );
  });

  it('refuses before downloading a url source', async () => {
    const w = world({ key_1: 0 });
    w.web.set('https://photos.example/car.png', fileOf(png()));
    const request: JobRequest = {
      ...uploadRequest('plate'),
      source: { kind: 'url', url: 'https://photos.example/car.png' },
    };
    await expect(w.create(owner, request)).rejects.toThrow(InsufficientCreditsError);
    expect(w.downloads).toEqual([]);
  });

  it('still runs an analysis for a balance too small for an edit', async () => {
    const w = world({ key_1: PRICES.analysis });
    await expect(w.create(owner, uploadRequest('plate'))).rejects.toThrow(InsufficientCreditsError);
    const { job } = await w.create(owner, uploadRequest('analyze'), null, 'analyze');
    expect(job.status).toBe('queued');
    expect(w.balanceOf('key_1')).toEqual({ available: 0, reserved: PRICES.analysis, usedTotal: 0 });
  });

  it('refuses a guest whose trial account has no balance', async () => {
    const w = world();
    await expect(w.create(guest, uploadRequest('plate'))).rejects.toThrow(
      `This operation needs ${PRICES.edit} credits; 0 are available`,
    );
    expect(w.store.stored.size).toBe(0);
  });

  it('refuses with 402 the second of two simultaneous requests when the balance covers one', async () => {
    const w = world({ key_1: PRICES.edit });
    const outcomes = await Promise.allSettled([
      w.create(owner, uploadRequest('plate', png(640, 480))),
      w.create(owner, uploadRequest('plate', png(800, 600))),
    ]);
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(InsufficientCreditsError);
    expect(w.balanceOf('key_1')).toEqual({ available: 0, reserved: PRICES.edit, usedTotal: 0 });
    expect(w.store.stored.size).toBe(1);
    expect(w.store.started).toHaveLength(1);
  });
});

describe('createJob: jobs in flight (429)', () => {
  it('refuses with 429 and Retry-After the job past the limit, storing, reserving and starting nothing', async () => {
    const w = world({ key_1: STARTING_BALANCE }, 2);
    await w.create(owner, uploadRequest('plate'));
    await w.create(owner, uploadRequest('analyze'));
    const before = { ...w.balanceOf('key_1') };
    const refused = w.create(owner, uploadRequest('analyze'));
    await expect(refused).rejects.toMatchObject({ status: 429, code: 429, retryAfterSeconds: 5 });
    await expect(refused).rejects.toThrow(/already has 2 jobs queued or processing/);
    expect(w.balanceOf('key_1')).toEqual(before);
    expect(w.store.stored.size).toBe(2);
    expect(w.store.started).toHaveLength(2);
    expect(w.objects.size, 'the refused job keeps no photo').toBe(2);
  });

  it('says 402, not 429, to a caller who could not pay anyway', async () => {
    const w = world({ key_1: PRICES.edit }, 1);
    await w.create(owner, uploadRequest('plate'));
    await expect(w.create(owner, uploadRequest('plate'))).rejects.toMatchObject({ status: 402 });
  });

  it('takes a job again once one in flight has ended, and counts each account on its own', async () => {
    const w = world({ key_1: STARTING_BALANCE, key_2: STARTING_BALANCE }, 1);
    const { job } = await w.create(owner, uploadRequest('plate'));
    await expect(w.create(owner, uploadRequest('plate'))).rejects.toMatchObject({ status: 429 });
    expect((await w.create(otherKey, uploadRequest('plate'))).status).toBe(202);
    await prepareJob(w.store, job.id);
    await settleJob(w.store, {
      jobId: job.id,
      outcome: 'failure',
      failure: { Error: 'PlateNotFoundError', Cause: JSON.stringify({ errorMessage: 'no plate' }) },
    });
    expect((await w.create(owner, uploadRequest('plate'))).status).toBe(202);
  });
});

describe('createJob: Idempotency-Key', () => {
  it('returns the same job for a repeated key and request, reserving and starting it once', async () => {
    const w = world();
    const first = await w.create(owner, uploadRequest('plate'), 'key-a');
    const again = await w.create(owner, uploadRequest('plate'), 'key-a');
    const balance = { available: STARTING_BALANCE - PRICES.edit, reserved: PRICES.edit, usedTotal: 0 };
    // Both answers show the balance with the one reservation, read after it was made.
    expect(first.account).toEqual(balance);
    // The replay says so, so the creation is logged and counted once.
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ status: 202, job: first.job, account: balance, replayed: true });
    expect(w.balanceOf('key_1')).toEqual(balance);
    expect(w.store.stored.size).toBe(1);
    expect(w.store.started).toHaveLength(1);
  });

  it('replays a finished job with 200 and its result', async () => {
    const w = world();
    const { job } = await w.create(owner, uploadRequest('plate'), 'key-a');
    await prepareJob(w.store, job.id);
    const output = { output_kind: 'image' as const, inference_cached: false, model_version: {} };
    await settleJob(w.store, { jobId: job.id, outcome: 'success', result: { output, files: [] } });
    const replay = await w.create(owner, uploadRequest('plate'), 'key-a');
    expect(replay.status).toBe(200);
    expect(replay.job).toMatchObject({ id: job.id, status: 'success', output });
    expect(w.balanceOf('key_1')).toEqual({
      available: STARTING_BALANCE - PRICES.edit,
      reserved: 0,
      usedTotal: PRICES.edit,
    });
  });

  it('replays the original job even after the balance has run out', async () => {
    const w = world({ key_1: PRICES.edit });
    const first = await w.create(owner, uploadRequest('plate'), 'key-a');
    const again = await w.create(owner, uploadRequest('plate'), 'key-a');
    expect(again.job.id).toBe(first.job.id);
  });

  it('treats the same photo under another file name as the same request', async () => {
    const w = world();
    const photo = png();
    const first = await w.create(owner, uploadRequest('plate', photo), 'key-a');
    const renamed = uploadRequest('plate', photo, {
      source: { kind: 'file', file: fileOf(photo, 'other.png') },
    });
    expect((await w.create(owner, renamed, 'key-a')).job.id).toBe(first.job.id);
  });

  it.each<[string, JobRequest]>([
    ['another photo', uploadRequest('plate', png(800, 600))],
    ['another operation', uploadRequest('studio_background')],
    ['other options', uploadRequest('plate', png(), { requested: { plateColor: '#ffffff' } })],
  ])('refuses the key with %s with 409, reserving and starting nothing more', async (_, different) => {
    const w = world();
    await w.create(owner, uploadRequest('plate'), 'key-a');
    const refused = w.create(owner, different, 'key-a');
    await expect(refused).rejects.toThrow(ConflictError);
    await expect(refused).rejects.toMatchObject({ status: 409, code: 409 });
    expect(w.balanceOf('key_1')!.reserved).toBe(PRICES.edit);
    expect(w.store.stored.size).toBe(1);
    expect(w.store.started).toHaveLength(1);
  });

  it('refuses the key used on another route with 409', async () => {
    const w = world();
    await w.create(owner, uploadRequest('plate'), 'key-a', 'jobs');
    await expect(w.create(owner, uploadRequest('plate'), 'key-a', 'process')).rejects.toThrow(ConflictError);
  });

  it("keeps one caller's keys apart from another's", async () => {
    const w = world({ key_1: STARTING_BALANCE, key_2: STARTING_BALANCE });
    const mine = await w.create(owner, uploadRequest('plate'), 'key-a');
    const theirs = await w.create(otherKey, uploadRequest('plate'), 'key-a');
    expect(theirs.job.id).not.toBe(mine.job.id);
    expect(theirs.job.ownerId).toBe('key_2');
    expect(w.balanceOf('key_1')!.reserved).toBe(PRICES.edit);
    expect(w.balanceOf('key_2')!.reserved).toBe(PRICES.edit);
  });

  it('creates one job for two simultaneous requests with the same key, and keeps one copy of the photo', async () => {
    const w = world();
    const [a, b] = await Promise.all([
      w.create(owner, uploadRequest('plate'), 'key-a'),
      w.create(owner, uploadRequest('plate'), 'key-a'),
    ]);
    expect(b.job.id).toBe(a.job.id);
    expect(w.balanceOf('key_1')!.reserved).toBe(PRICES.edit);
    expect(w.store.started).toHaveLength(1);
    expect([...w.objects.keys()]).toEqual([a.job.source.key]);
  });

  it('creates a new job for each request sent without a key', async () => {
    const w = world();
    const first = await w.create(owner, uploadRequest('plate'));
    const second = await w.create(owner, uploadRequest('plate'));
    expect(second.job.id).not.toBe(first.job.id);
    expect(w.balanceOf('key_1')!.reserved).toBe(2 * PRICES.edit);
    expect(w.store.started).toHaveLength(2);
  });
});

describe('createJob: refused input', () => {
  const expectNothingDone = (w: ReturnType<typeof world>) => {
    expect(w.balanceOf('key_1')).toEqual(untouched);
    expect(w.store.stored.size).toBe(0);
    expect(w.objects.size).toBe(0);
    expect(w.store.started).toEqual([]);
  };

  it('refuses a file that is not a JPG, PNG or WEBP with 415', async () => {
    const w = world();
    const refused = w.create(owner, uploadRequest('plate', GIF));
    await expect(refused).rejects.toThrow(UnsupportedMediaTypeError);
    await expect(refused).rejects.toMatchObject({ status: 415, code: 415 });
    expectNothingDone(w);
  });

  it('refuses a background_file that is not an image with 415 naming it', async () => {
    const w = world();
    const request = uploadRequest('studio_background', png(), { backgroundFile: fileOf(GIF, 'bg.gif') });
    await expect(w.create(owner, request)).rejects.toThrow(/background_file is not a JPG, PNG or WEBP/);
    expectNothingDone(w);
  });

  it('refuses a url whose download is not an image with 415', async () => {
    const w = world();
    w.web.set('https://photos.example/car.gif', fileOf(GIF, 'car.gif'));
    const request: JobRequest = {
      ...uploadRequest('plate'),
      source: { kind: 'url', url: 'https://photos.example/car.gif' },
    };
    await expect(w.create(owner, request)).rejects.toThrow(UnsupportedMediaTypeError);
    expectNothingDone(w);
  });

  it('refuses a photo over the source size limit with 413', async () => {
    const w = world();
    const oversized = Buffer.concat([png(), Buffer.alloc(MAX_SOURCE_BYTES)]);
    await expect(w.create(owner, uploadRequest('plate', oversized))).rejects.toThrow(PayloadTooLargeError);
    expectNothingDone(w);
  });

  it('refuses a webhook_url on a private address with 400', async () => {
    const w = world();
    const request = uploadRequest('plate', png(), { requested: { webhookUrl: 'http://10.0.0.7/hook' } });
    await expect(w.create(owner, request)).rejects.toThrow(BadRequestError);
    expectNothingDone(w);
  });
});

describe('createJob: a workflow that cannot start', () => {
  it('answers 503, fails the job and gives its credits back', async () => {
    const w = world();
    const unavailable: WorkflowStarter = {
      async start() {
        const error = new Error('Rate exceeded');
        error.name = 'ServiceUnavailable';
        throw error;
      },
    };
    const refused = createJob({ ...w.deps, workflow: unavailable }, owner, uploadRequest('plate'), {
      route: 'jobs',
      idempotencyKey: null,
    });
    await expect(refused).rejects.toThrow(TransientError);
    await expect(refused).rejects.toMatchObject({ status: 503 });
    const [job] = w.store.stored.values();
    expect(job).toMatchObject({ status: 'failed', error: { code: 500 }, chargedCredits: 0 });
    expect(w.balanceOf('key_1')).toEqual(untouched);
  });

  it('starts the same job again when the request is repeated under the same Idempotency-Key', async () => {
    const w = world();
    let outages = 1;
    const flaky: WorkflowStarter = {
      async start(jobId, attempt) {
        if (outages-- > 0) throw Object.assign(new Error('Rate exceeded'), { name: 'ServiceUnavailable' });
        return w.store.workflow.start(jobId, attempt);
      },
    };
    const deps = { ...w.deps, workflow: flaky };
    const request = uploadRequest('plate');
    const options = { route: 'jobs' as const, idempotencyKey: 'order-17' };
    await expect(createJob(deps, owner, request, options)).rejects.toMatchObject({ status: 503 });
    const [failed] = w.store.stored.values();

    const again = await createJob(deps, owner, request, options);
    expect(again.status).toBe(202);
    expect(again.job).toMatchObject({
      id: failed!.id,
      status: 'queued',
      error: null,
      reservedCredits: PRICES.edit,
    });
    expect(w.store.started).toEqual([{ jobId: failed!.id, attempt: 2 }]);
    expect(w.balanceOf('key_1')).toMatchObject({
      available: STARTING_BALANCE - PRICES.edit,
      reserved: PRICES.edit,
    });

    const thirdTime = await createJob(deps, owner, request, options);
    expect(thirdTime).toMatchObject({ status: 202, replayed: true, job: { id: failed!.id } });
    expect(w.store.started).toHaveLength(1);
  });

  it('replays a job that ran and failed as it is, without starting it again', async () => {
    const w = world();
    const first = await w.create(owner, uploadRequest('plate'), 'order-18');
    w.store.stored.set(first.job.id, {
      ...first.job,
      status: 'failed',
      startedAt: '2026-01-01T00:00:01.000Z',
      error: { code: 803, message: 'no plate' },
    });
    const again = await w.create(owner, uploadRequest('plate'), 'order-18');
    expect(again).toMatchObject({ status: 200, replayed: true, job: { status: 'failed' } });
    expect(w.store.started).toHaveLength(1);
  });
});

describe('createJob: callers', () => {
  it('runs a master-key job without an account, reserving nothing', async () => {
    const w = world();
    const { status, job } = await w.create(master, uploadRequest('plate'));
    expect(status).toBe(202);
    expect(job).toMatchObject({
      ownerId: 'master',
      account: null,
      costCredits: PRICES.edit,
      reservedCredits: 0,
    });
    expect(w.balanceOf('key_1')).toEqual(untouched);
    expect(w.store.started).toEqual([{ jobId: job.id, attempt: 1 }]);
  });

  it("reserves a guest's job from its trial balance and gives the session the job", async () => {
    const w = world({ trial_1: STARTING_BALANCE });
    const { job } = await w.create(guest, uploadRequest('plate'));
    expect(job).toMatchObject({ ownerId: 'guest_sess_1', account: 'trial_1', reservedCredits: PRICES.edit });
    expect(w.balanceOf('trial_1')).toEqual({
      available: STARTING_BALANCE - PRICES.edit,
      reserved: PRICES.edit,
      usedTotal: 0,
    });
  });
});
