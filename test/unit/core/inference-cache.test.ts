import { describe, expect, it } from 'vitest';
import type { JobParams } from '#core/jobs/job.ts';
import type { OperationRunner } from '#core/ports.ts';
import { cachedRunner } from '#core/use-cases/inference-cache.ts';
import { memoryObjects } from './memory-ports.ts';

const params: JobParams = {
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

function setup() {
  const { store: objects, objects: stored } = memoryObjects();
  let runs = 0;
  const runner: OperationRunner = {
    async run() {
      runs++;
      return {
        files: [
          {
            name: 'result.jpg',
            roles: ['url'],
            bytes: Buffer.from(`pixels-${runs}`),
            contentType: 'image/jpeg',
          },
        ],
        modelVersion: { plate_detector: 'v1' },
        inferenceCached: false,
        plates: [{ corners: CORNERS, score: 0.8 }],
      };
    },
  };
  let modelKey = 'models-a';
  const cache = cachedRunner(runner, { objects, modelKey: () => modelKey });
  let jobs = 0;
  // As runInference uses it: each job stores the files under its own results/, then says so.
  const cached: OperationRunner = {
    async run(operation, input) {
      const resultPrefix = `results/job_${++jobs}/`;
      const result = await cache.run(operation, { ...input, resultPrefix });
      for (const file of result.files)
        await objects.put(`${resultPrefix}${file.name}`, file.bytes, file.contentType);
      await result.stored?.();
      return result;
    },
  };
  const input = {
    source: Buffer.from('photo'),
    sourceSha256: 'abc',
    params,
    background: null,
    tenant: 'key_a',
  };
  return {
    cached,
    input,
    stored,
    runs: () => runs,
    setModelKey: (key: string) => {
      modelKey = key;
    },
  };
}

const CORNERS: [[number, number], [number, number], [number, number], [number, number]] = [
  [1, 2],
  [9, 2],
  [9, 4],
  [1, 4],
];

describe('inference cache', () => {
  it('serves the same bytes with the same parameters from storage, marked inference_cached', async () => {
    const { cached, input, runs } = setup();
    const first = await cached.run('plate', input);
    const second = await cached.run('plate', input);
    expect(first.inferenceCached).toBe(false);
    expect(second).toMatchObject({
      inferenceCached: true,
      plates: [{ corners: CORNERS, score: 0.8 }],
      modelVersion: { plate_detector: 'v1' },
    });
    expect(second.files[0]!.bytes.toString()).toBe('pixels-1');
    expect(runs()).toBe(1);
  });

  it('runs again for other parameters, another operation or a custom background', async () => {
    const { cached, input, runs } = setup();
    await cached.run('plate', input);
    await cached.run('plate', { ...input, params: { ...params, plateColor: '#ffffff' } });
    await cached.run('plate_mask', input);
    await cached.run('plate', { ...input, background: Buffer.from('bg') });
    expect(runs()).toBe(4);
  });

  it('ignores parameters that do not shape the result, such as the webhook', async () => {
    const { cached, input, runs } = setup();
    await cached.run('plate', input);
    await cached.run('plate', { ...input, params: { ...params, webhookUrl: 'https://hooks.example/x' } });
    expect(runs()).toBe(1);
  });

  it('never serves a result made by other model files', async () => {
    const { cached, input, runs, setModelKey } = setup();
    await cached.run('plate', input);
    setModelKey('models-b');
    expect((await cached.run('plate', input)).inferenceCached).toBe(false);
    expect(runs()).toBe(2);
  });

  it("keeps one copy of a result: the entry points at the first job's files, not a second copy", async () => {
    const { cached, input, stored } = setup();
    await cached.run('plate', input);
    expect([...stored.keys()].filter((key) => key.endsWith('result.jpg'))).toEqual([
      'results/job_1/result.jpg',
    ]);
    stored.delete('results/job_1/result.jpg'); // expired or deleted with its job
    expect((await cached.run('plate', input)).inferenceCached).toBe(false);
  });

  it('remembers nothing for a caller that does not store the files', async () => {
    const { input, runs } = setup();
    const { store: objects } = memoryObjects();
    const runner: OperationRunner = {
      run: async () => ({ files: [], modelVersion: {}, inferenceCached: false }),
    };
    const cache = cachedRunner(runner, { objects, modelKey: () => 'm' });
    await cache.run('plate', input);
    expect((await cache.run('plate', input)).inferenceCached).toBe(false);
    expect(runs()).toBe(0);
  });

  it('treats an entry whose files have expired as a miss', async () => {
    const { cached, input, stored, runs } = setup();
    await cached.run('plate', input);
    for (const key of stored.keys()) if (key.endsWith('result.jpg')) stored.delete(key);
    expect((await cached.run('plate', input)).inferenceCached).toBe(false);
    expect(runs()).toBe(2);
  });

  it('never tells a tenant that another tenant processed the same photo', async () => {
    const { cached, input, runs } = setup();
    await cached.run('plate', input);
    const other = await cached.run('plate', { ...input, tenant: 'key_b' });
    expect(other.inferenceCached).toBe(false);
    expect(other.files[0]!.bytes.toString()).toBe('pixels-1'); // the work itself is shared
    expect((await cached.run('plate', { ...input, tenant: 'key_b' })).inferenceCached).toBe(true);
    const { tenant: _none, ...anonymous } = input;
    expect((await cached.run('plate', anonymous)).inferenceCached).toBe(false);
    expect(runs()).toBe(1);
  });
});
