import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, evalPhotoForm, hasShared, type RunningServer, startServer } from '../support/local-server.ts';

/**
 * The integration part of `npm run test:quick`: `npm start` comes up, takes a photo, hides its plate and
 * serves the result. The rest of the integration suite (minutes) proves the details.
 */
describe.skipIf(!hasShared)('smoke: npm start hides a plate', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('creates a plate job, finishes it and serves the result', async () => {
    const client = api(server, await server.createKey(10));
    const created = await client.postForm('/jobs', evalPhotoForm('plates/eu/eu1.jpg', { mode: 'plate' }));
    expect(created.status).toBe(202);
    const done = await client.waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'success', quota: { remaining: 5 } });
    const result = await fetch(new URL(done.body.url, server.origin));
    expect(result.status).toBe(200);
    expect(Buffer.from(await result.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  }, 120_000);
});
