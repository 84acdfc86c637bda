import { describe, expect, it } from 'vitest';
import { GoneError, jobErrorFromFailure, NotFoundError, PlateNotFoundError } from '#core/errors.ts';
import type { JobParams, PlateFound } from '#core/jobs/job.ts';
import type { ObjectStore, OperationResult } from '#core/ports.ts';
import { runInference } from '#core/use-cases/run-inference.ts';

const params: JobParams = {
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

function setup(result: Partial<OperationResult>) {
  const stored = new Map<string, Buffer>([['sources/j.jpg', Buffer.from('photo')]]);
  const objects: ObjectStore = {
    async put(key, body) {
      stored.set(key, body);
    },
    async get(key) {
      const body = stored.get(key);
      if (!body) throw new NotFoundError(key);
      return body;
    },
    async exists(key) {
      return stored.has(key);
    },
    async delete(key) {
      stored.delete(key);
    },
    async presignGet(key) {
      return key;
    },
  };
  const runner = {
    async run(): Promise<OperationResult> {
      return {
        files: [{ name: 'result.jpg', roles: ['url'], bytes: Buffer.from('px'), contentType: 'image/jpeg' }],
        modelVersion: { plate_detector: 'v1' },
        inferenceCached: false,
        ...result,
      };
    },
  };
  const order = (extra: Partial<JobParams> = {}) => ({
    jobId: 'job_1',
    operation: 'studio_background' as const,
    source: { key: 'sources/j.jpg', contentType: 'image/jpeg', sha256: 'abc' },
    params: { ...params, ...extra },
    resultPrefix: 'results/job_1/',
  });
  return { stored, run: (extra?: Partial<JobParams>) => runInference({ objects, runner }, order(extra)) };
}

describe('a plate left visible by a background operation', () => {
  it('is said in the output: plates_detected and plate_hidden', async () => {
    const { output } = await setup({ plates: [], plateHidden: false }).run();
    expect(output).toMatchObject({ plates_detected: 0, plates: [], plate_hidden: false });
    const plate: PlateFound = {
      corners: [
        [10, 20],
        [50, 20],
        [50, 30],
        [10, 30],
      ],
      score: 0.9,
    };
    const hidden = await setup({ plates: [plate], plateHidden: true }).run();
    expect(hidden.output).toMatchObject({ plates_detected: 1, plates: [plate], plate_hidden: true });
  });

  it('fails the job with 803 under require_plate, storing no result', async () => {
    const t = setup({ plates: [], plateHidden: false });
    const failed = t.run({ requirePlate: true });
    await expect(failed).rejects.toThrow(PlateNotFoundError);
    await expect(failed).rejects.toThrow(/front or rear.*require_plate/);
    expect([...t.stored.keys()]).toEqual(['sources/j.jpg']);
    // A side view (nothing looks like a plate) passes: there was nothing to hide.
    await expect(setup({ plates: [], plateHidden: true }).run({ requirePlate: true })).resolves.toBeDefined();
  });
});

describe('a source photo that is no longer stored', () => {
  it('fails the job as gone (410), never as an internal error, storing no result', async () => {
    const t = setup({});
    t.stored.delete('sources/j.jpg');
    const failed = t.run().catch((error: unknown) => error);
    expect(await failed).toBeInstanceOf(GoneError);
    expect([...t.stored.keys()]).toEqual([]);
    const cause = JSON.stringify({ errorType: 'GoneError', errorMessage: ((await failed) as Error).message });
    expect(jobErrorFromFailure({ Error: 'GoneError', Cause: cause })).toEqual({
      code: 410,
      message: 'The photos of this job are no longer stored (expired or deleted); create a new job',
    });
  });
});
