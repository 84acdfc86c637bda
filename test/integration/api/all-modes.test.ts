import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  downloadFile,
  evalPhotoForm,
  hasShared,
  type RunningServer,
  startServer,
} from '../support/local-server.ts';

const EXTERIOR = 'plates/eu/eu1.jpg';
const INTERIOR = 'interiors/LABELED(in)audi_a4__595804083s.jpg';
/** A listing photo like those the analysis head was fitted on (a rear close-up in a garage is refused with 800). */
const LISTING_EXTERIOR = 'views/LABELED(front)audi_a4__595804076s.jpg';

/** Every operation through the public API on real photos, as a client would run them. */
describe.skipIf(!hasShared)('all six modes through the API', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const download = (url: string) => downloadFile(server, url);

  it.each([
    ['plate', 5, ['url']],
    ['studio_background', 5, ['url', 'background_mask_url', 'mask_url', 'plate_mask_url']],
    ['background', 5, ['url', 'background_mask_url', 'mask_url']],
    ['plate_mask', 5, ['url', 'plate_mask_url', 'mask_url']],
    ['background_mask', 5, ['url', 'background_mask_url', 'mask_url']],
  ])('%s succeeds on a real photo, costs %i credits and links its files', async (mode, cost, links) => {
    const client = api(server, await server.createKey(cost));
    const created = await client.postForm('/jobs', evalPhotoForm(EXTERIOR, { mode: mode }));
    expect(created.status).toBe(202);
    const done = await client.waitForJob(created.body.id, 120_000);
    expect(done.body).toMatchObject({ status: 'success', operation: mode, quota: { remaining: 0 } });
    for (const link of links) expect(done.body[link], link).toMatch(/^\/api\/v1\/results\/job_/);
    const meta = await sharp(await download(done.body.url)).metadata();
    expect([meta.width, meta.height]).toEqual([1000, 750]);
    if (mode.endsWith('_mask')) expect(meta.channels).toBe(1);
  });

  it("studio_background uses the key's stored background file when the request sends none", async () => {
    const backgroundFile = path.join(server.dataDir, 'red-backdrop.png');
    await sharp({ create: { width: 640, height: 480, channels: 3, background: '#d01010' } })
      .png()
      .toFile(backgroundFile);
    const client = api(server, await server.createKey(5, ['--background-file', backgroundFile]));
    const created = await client.postForm('/jobs', evalPhotoForm(EXTERIOR, { mode: 'studio_background' }));
    expect(created.body.background).toBe('custom');
    const done = await client.waitForJob(created.body.id, 120_000);
    expect(done.body.status).toBe('success');
    const { data } = await sharp(await download(done.body.url))
      .extract({ left: 0, top: 0, width: 4, height: 4 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([data[0]! > 150, data[1]! < 80, data[2]! < 80]).toEqual([true, true, true]);
  });

  it('studio_background on a real cabin photo fails with 802 and costs nothing', async () => {
    const client = api(server, await server.createKey(5));
    const created = await client.postForm('/jobs', evalPhotoForm(INTERIOR, { mode: 'studio_background' }));
    expect(created.status).toBe(202);
    const failed = await client.waitForJob(created.body.id, 120_000);
    expect(failed.body).toMatchObject({ status: 'failed', result: false, code: 802, error: { code: 802 } });
    expect(failed.body.url).toBeUndefined();
    expect(failed.body.error.message).toMatch(/interior/);
    expect((await client.get('/quota')).body.quota.remaining).toBe(5);
  });

  it('analyze classifies an exterior and an interior for 1 credit each', async () => {
    const client = api(server, await server.createKey(2));
    const exterior = await client.waitForJob(
      (await client.postForm('/jobs', evalPhotoForm(LISTING_EXTERIOR, { mode: 'analyze' }))).body.id,
    );
    expect(exterior.body).toMatchObject({ status: 'success', output: { output_kind: 'analysis' } });
    expect(exterior.body.url).toBeUndefined();
    expect(exterior.body.analysis.photo_type).toMatchObject({ value: 'exterior', conf: expect.any(Number) });
    expect(exterior.body.analysis.view).toMatchObject({ value: 'front' });
    expect(exterior.body.analysis.detections).toHaveProperty('car');
    const interior = await client.waitForJob(
      (await client.postForm('/jobs', evalPhotoForm(INTERIOR, { mode: 'analyze' }))).body.id,
    );
    expect(interior.body.analysis.photo_type.value).toBe('interior');
    expect(interior.body.quota.remaining).toBe(0);
  });
});
