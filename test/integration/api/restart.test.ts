import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  api,
  hasShared,
  photoForm,
  type RunningServer,
  SHARED,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

/** Photos with a plate in sight: `plate` jobs (5 credits each) that succeed when they run. */
const PLATES = hasShared ? readdirSync(path.join(SHARED, 'eval', 'plates', 'eu')).sort() : [];
const TERMINAL = ['success', 'failed', 'cancelled'];

describe.skipIf(!hasShared)('a hard kill of the local server', () => {
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers.reverse()) await server.stop().catch(() => undefined);
  }, 300_000);

  it('loses no job: after kill -9 with 10 jobs running and a restart, every job ends within 3 minutes and credits charged = 5 × successes', async () => {
    const first = await startServer();
    servers.push(first);
    const key = await first.createKey(50);
    const ids: string[] = [];
    for (const name of PLATES.slice(0, 10)) {
      const form = new FormData();
      form.append('mode', 'plate');
      form.append('file', new Blob([readFileSync(path.join(SHARED, 'eval', 'plates', 'eu', name))]), name);
      const created = await api(first, key).postForm('/jobs', form);
      expect(created.status).toBe(202);
      ids.push(created.body.id);
    }
    expect(ids).toHaveLength(10);
    // Some are being processed when the process dies, the rest are queued behind them.
    const before = await Promise.all(ids.map(async (id) => (await api(first, key).get(`/jobs/${id}`)).body));
    expect(before.filter((job) => TERMINAL.includes(job.status)).length).toBeLessThan(10);
    await first.kill();

    const restartedAt = Date.now();
    const second = await startServer({}, { dataDir: first.dataDir });
    servers.push(second);
    const c = api(second, key);
    const jobs = await eventually(
      () => Promise.all(ids.map(async (id) => (await c.get(`/jobs/${id}`)).body)),
      (polled) => polled.every((job) => TERMINAL.includes(job.status)),
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    expect(jobs.map((job) => job.status).filter((status) => !TERMINAL.includes(status))).toEqual([]);
    console.log(`all 10 jobs ended ${((Date.now() - restartedAt) / 1000).toFixed(0)} s after the restart`);
    const successes = jobs.filter((job) => job.status === 'success').length;
    expect(successes, JSON.stringify(jobs.map((job) => job.error))).toBeGreaterThan(0);
    const quota = (await c.get('/quota')).body.quota;
    expect(quota).toMatchObject({ used_total: 5 * successes, remaining: 50 - 5 * successes });
  }, 360_000);

  it('stops within 10 s on Ctrl-C with 20 jobs waiting for inference, failing none of them', async () => {
    const server = await startServer(WITHOUT_MODELS);
    servers.push(server);
    const key = await server.createKey(100);
    // One 12 MP photo: most of a second a run on the marker runner, so the jobs queue behind the first.
    const photo = await markedPhoto({ width: 4000, height: 3000 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await api(server, key).postForm('/jobs', photoForm(photo, { mode: 'plate' }));
      expect(created.status).toBe(202);
      ids.push(created.body.id);
    }
    const before = await Promise.all(ids.map(async (id) => (await api(server, key).get(`/jobs/${id}`)).body));
    const open = before.filter((job) => !TERMINAL.includes(job.status)).length;
    expect(open).toBeGreaterThan(10);
    const stopping = Date.now();
    await server.kill('SIGINT');
    const stopSeconds = (Date.now() - stopping) / 1000;
    console.log(`Ctrl-C with ${open} jobs open: exited in ${stopSeconds.toFixed(1)} s`);
    expect(stopSeconds).toBeLessThan(10);
    // Stopped, not failed: their executions stay running on disk and run again at the next start, as the
    // kill -9 test above shows.
    expect(server.output()).not.toMatch(/FAILED|TIMED_OUT/);
  }, 120_000);
});
