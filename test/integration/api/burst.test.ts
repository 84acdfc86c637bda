import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { SOAK } from '../../support/soak.ts';
import {
  api,
  hasShared,
  photoForm,
  type RunningServer,
  SHARED,
  startServer,
} from '../support/local-server.ts';

const PLATES = hasShared
  ? readdirSync(path.join(SHARED, 'eval', 'plates', 'eu'))
      .sort()
      .slice(0, 10)
  : [];
const BURST = 40;

/** A photo as a phone takes it: a labelled plate photo brought to 12 MP (4000 x 3000). */
const twelveMegapixels = (name: string) =>
  sharp(path.join(SHARED, 'eval', 'plates', 'eu', name))
    .resize(4000, 3000, { fit: 'fill' })
    .jpeg({ quality: 90 })
    .toBuffer();

/** A process that keeps one core busy, as another program on a slower host would. */
const busyProcess = (): ChildProcess =>
  spawn(process.execPath, ['-e', 'for (;;) Math.sqrt(Math.random())'], { stdio: 'ignore' });

/**
 * A folder of phone photos sent as fast as `npm start` takes them (issue 33), at its default settings:
 * one inference worker, 20 jobs in flight per key. Every accepted job ends with its result or a verdict on
 * its photo, never a timeout; the rest get 429 at creation; the credits are exact. Minutes of model work,
 * so in the soak tier (`npm run test:soak`).
 */
describe.runIf(SOAK && hasShared).each([
  ['on an idle machine', false],
  ['with a busy process beside it', true],
])('a burst of 12 MP photos %s', (_name, busy) => {
  let server: RunningServer;
  let busyChild: ChildProcess | undefined;
  afterAll(async () => {
    busyChild?.kill('SIGKILL');
    await server?.stop();
  });

  it(`ends every accepted job of two bursts of ${BURST} with a result or a verdict, never a timeout`, async () => {
    if (busy) busyChild = busyProcess();
    const photos = await Promise.all(PLATES.map(twelveMegapixels));
    // Defaults of npm start; the test's own requests are not throttled by the gateway.
    server = await startServer({ RATE_LIMIT_KEY_BURST: '1000', RATE_LIMIT_KEY_PER_SECOND: '1000' });
    const key = await server.createKey(1000);
    const client = api(server, key);
    let charged = 0;
    for (const round of [1, 2]) {
      const created = await Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          client.postForm(
            '/jobs',
            photoForm(photos[i % photos.length]!, { mode: i % 2 === 0 ? 'studio_background' : 'plate' }),
          ),
        ),
      );
      const accepted = created.filter((response) => response.status === 202);
      const refused = created.filter((response) => response.status !== 202);
      expect(refused.map((response) => response.status)).toEqual(Array(refused.length).fill(429));
      expect(accepted.length).toBeGreaterThan(0);
      const finals = [];
      for (const response of accepted) finals.push((await client.waitForJob(response.body.id, 900_000)).body);
      const outcomes = finals.map((job) => (job.status === 'success' ? 'success' : job.code));
      console.log(
        `round ${round}${busy ? ' (busy host)' : ''}: ${accepted.length} accepted, ${refused.length} refused: ${outcomes.join(' ')}`,
      );
      for (const outcome of outcomes) expect(['success', 802, 803]).toContain(outcome);
      charged += 5 * outcomes.filter((outcome) => outcome === 'success').length;
      expect((await client.get('/quota')).body.quota).toMatchObject({
        used_total: charged,
        remaining: 1000 - charged,
      });
    }
  }, 1_800_000);
});
