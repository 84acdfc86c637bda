import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipBuffer } from '#aws/zip-archives.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  api,
  downloadFile,
  photoForm,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

/**
 * A whole car in a 1000 x 750 photo, for the marker runner: the subject is the options and the files they
 * give, not the cut-out (test/integration/vision covers that with the models).
 */
let EXTERIOR: Buffer;

/** The outputs of issue 26 through the local API, as a client sends them. */
describe('studio outputs through the API', () => {
  let server: RunningServer;

  beforeAll(async () => {
    [server, EXTERIOR] = await Promise.all([
      startServer(WITHOUT_MODELS),
      markedPhoto({ width: 1000, height: 750 }),
    ]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const download = (url: string) => downloadFile(server, url);

  it('background transparent gives a PNG cut-out with alpha, max_width scales it and its mask', async () => {
    const client = api(server, await server.createKey(5));
    const created = await client.postForm(
      '/jobs',
      photoForm(EXTERIOR, { mode: 'studio_background', background: 'transparent', max_width: '500' }),
    );
    expect(created.status).toBe(202);
    expect(created.body.background).toBe('transparent');
    const done = await client.waitForJob(created.body.id, 120_000);
    expect(done.body.status).toBe('success');
    expect(done.body.url).toMatch(/result\.png$/);
    expect(done.body.output.composition).toMatchObject({
      framing: expect.any(String),
      vehicles: expect.any(Number),
    });
    const { data, info } = await sharp(await download(done.body.url))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([500, 375, 4]);
    const alphaAt = (x: number, y: number) => data[(y * info.width + x) * 4 + 3]!;
    expect(alphaAt(2, 2)).toBe(0); // the street is gone
    expect(alphaAt(250, Math.round(375 * 0.7))).toBe(255); // the centred car is there, opaque
    const mask = await sharp(await download(done.body.background_mask_url)).metadata();
    expect([mask.width, mask.height]).toEqual([500, 375]);
  });

  it('a portrait photo comes out on the 4:3 landscape canvas; an aspect with framing keep is a 400', async () => {
    const client = api(server, await server.createKey(5));
    const portrait = await markedPhoto({ width: 600, height: 800 });
    const created = await client.postForm(
      '/jobs',
      photoForm(portrait, { mode: 'studio_background', plate_color: '#ff00ff' }),
    );
    const done = await client.waitForJob(created.body.id, 120_000);
    expect(done.body.status).toBe('success');
    expect(done.body.output.composition).toMatchObject({ framing: 'center', aspect: '4:3' });
    const { data, info } = await sharp(await download(done.body.url))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([800, 600]);
    // The reported plate moved with the car: its outline is where the downloaded result has the fill.
    expect(done.body.output.plates_detected).toBe(1);
    const [plate] = done.body.output.plates as Array<{ corners: number[][]; score: number }>;
    const x = Math.round(plate!.corners.reduce((sum, [cx]) => sum + cx!, 0) / 4);
    const y = Math.round(plate!.corners.reduce((sum, [, cy]) => sum + cy!, 0) / 4);
    const [r, g, b] = data.subarray((y * info.width + x) * info.channels);
    expect([r! > 200, g! < 60, b! > 200]).toEqual([true, true, true]);

    const refused = await client.postForm(
      '/jobs',
      photoForm(portrait, { mode: 'studio_background', framing: 'keep', aspect: '16:9' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 400,
      result: false,
      message: expect.stringMatching(/aspect/),
    });
  });

  it('an interior is no studio job: 802, credits released; require_exterior false cuts it out anyway', async () => {
    const key = await server.createKey(10);
    const client = api(server, key);
    const cabin = await markedPhoto({ interior: true });
    const refused = await client.postForm('/jobs', photoForm(cabin, { mode: 'studio_background' }));
    const failed = await client.waitForJob(refused.body.id, 120_000);
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 802 } });
    expect(failed.body.error.message).toMatch(/interior.*require_exterior: false/);
    expect((await client.get('/quota')).body.quota.remaining).toBe(10);

    const forced = await client.postForm(
      '/jobs',
      photoForm(cabin, { mode: 'background', require_exterior: 'false' }),
    );
    const done = await client.waitForJob(forced.body.id, 120_000);
    expect(done.body.status).toBe('success');
    expect((await client.get('/quota')).body.quota.remaining).toBe(5);
  });

  it('format webp on plate, and JPEG with transparency refused with the error body', async () => {
    const client = api(server, await server.createKey(5));
    const refused = await client.postForm(
      '/jobs',
      photoForm(EXTERIOR, { mode: 'background', background: 'transparent', format: 'jpg' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 400, result: false, message: expect.stringMatching(/jpg/) });
    const created = await client.postForm('/jobs', photoForm(EXTERIOR, { mode: 'plate', format: 'webp' }));
    const done = await client.waitForJob(created.body.id, 120_000);
    expect(done.body.url).toMatch(/result\.webp$/);
    expect((await sharp(await download(done.body.url)).metadata()).format).toBe('webp');
  });

  it('a batch takes the options and background_file of a job for each photo', async () => {
    const client = api(server, await server.createKey(5));
    const archive = await zipBuffer([{ name: 'car.jpg', data: EXTERIOR, compress: false }]);
    const form = new FormData();
    for (const [name, value] of Object.entries({ mode: 'background', format: 'png', max_width: '400' }))
      form.append(name, value);
    const red = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#d01010' } })
      .png()
      .toBuffer();
    form.append('background_file', new Blob([red], { type: 'image/png' }), 'red.png');
    form.append('archive', new Blob([archive], { type: 'application/zip' }), 'photos.zip');
    const created = await client.postForm('/batches', form);
    expect(created.status).toBe(202);
    expect(created.body.batch.background).toBe('custom');
    const id = created.body.batch.id as string;
    const batch: { status: string; items: Array<{ status: string; result: string | null }> } =
      await eventually(
        async () => (await client.get(`/batches/${id}`)).body.batch,
        (polled) => polled.status === 'completed',
        { timeoutMs: 120_000, intervalMs: 300 },
      );
    expect(batch.items[0], JSON.stringify(batch.items[0])).toMatchObject({
      status: 'succeeded',
      result: expect.stringMatching(/result\.png$/),
    });
    const { data, info } = await sharp(await download(batch.items[0]!.result!))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(info.width).toBe(400);
    expect([data[0]! > 150, data[1]! < 80, data[2]! < 80]).toEqual([true, true, true]);
  });
});
