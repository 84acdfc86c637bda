import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  downloadFile,
  evalPhotoForm,
  hasShared,
  type RunningServer,
  SHARED,
  startServer,
} from '../support/local-server.ts';

const PLATE_PHOTO = { file: 'plates/eu/eu1.jpg', box: { x: 396, y: 340, w: 203, h: 46 } };
// A Romanian dashcam frame of ../shared/eval/extra (the label's box rounded inwards).
const RO_FRAME = { file: 'extra/plates-ro/ro-0005.jpg', box: { x: 650, y: 338, w: 65, h: 17 } };
// An interior shot: no plate in view.
const NO_PLATE_PHOTO = 'interiors/LABELED(in)audi_a4__595804083s.jpg';
const FILL = '#ff00ff';

/** Share of the pixels inside `box` that are the fill colour (within JPEG's error). */
async function coverage(image: Buffer, box: { x: number; y: number; w: number; h: number }): Promise<number> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let hits = 0;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const i = (y * info.width + x) * 3;
      if (Math.abs(data[i]! - 255) + Math.abs(data[i + 1]! - 0) + Math.abs(data[i + 2]! - 255) < 60) hits++;
    }
  }
  return hits / (box.w * box.h);
}

describe.skipIf(!hasShared)('plate jobs on the local server (real model, real photos)', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ OUTBOUND_ALLOW_LOOPBACK: 'true' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('hides the labelled plate: create → poll → download, and charges 5 credits', async () => {
    const key = await server.createKey(20);
    const client = api(server, key);
    const created = await client.postForm(
      '/jobs',
      evalPhotoForm(PLATE_PHOTO.file, { mode: 'plate', plate_color: FILL }),
    );
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      result: true,
      status: 'queued',
      operation: 'plate',
      cost_credits: 5,
      plate_color: FILL,
      quota: { remaining: 15 },
    });
    expect(created.body.links.self).toBe(`/api/v1/jobs/${created.body.id}`);

    const done = await client.waitForJob(created.body.id);
    expect(done.body).toMatchObject({
      status: 'success',
      result: true,
      code: 200,
      error: null,
      quota: { remaining: 15 },
    });
    expect(done.body.url).toBe(`/api/v1/results/${created.body.id}/result.jpg`);
    expect(done.body.output).toMatchObject({
      output_kind: 'image',
      model_version: { plate_detector: expect.any(String) },
    });

    const download = await fetch(`${server.origin}${done.body.url}`);
    expect(download.status).toBe(200);
    const image = Buffer.from(await download.arrayBuffer());
    const meta = await sharp(image).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.exif).toBeUndefined();
    expect(await coverage(image, PLATE_PHOTO.box)).toBeGreaterThan(0.85);
  });

  it('hides the plate of a car ahead in a dashcam frame from a source no rule was first chosen on', async () => {
    const client = api(server, await server.createKey(5));
    const created = await client.postForm(
      '/jobs',
      evalPhotoForm(RO_FRAME.file, { mode: 'plate', plate_color: FILL }),
    );
    const done = await client.waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'success', code: 200 });
    expect(done.body.output.model_version.plate_detector).toMatch(/\+ppocr-v4/);
    const image = await downloadFile(server, done.body.url);
    expect(await coverage(image, RO_FRAME.box)).toBeGreaterThan(0.6);
  });

  it('reuses the inference for the same bytes and parameters, and says so', async () => {
    const client = api(server, await server.createKey(10));
    const form = () => evalPhotoForm(PLATE_PHOTO.file, { mode: 'plate', plate_color: '#00ff00' });
    const first = await client.waitForJob((await client.postForm('/jobs', form())).body.id);
    const second = await client.waitForJob((await client.postForm('/jobs', form())).body.id);
    expect(first.body.output.inference_cached).toBe(false);
    expect(second.body).toMatchObject({
      status: 'success',
      output: { inference_cached: true },
      quota: { remaining: 0 },
    });
    const [again, original] = await Promise.all([
      downloadFile(server, second.body.url),
      downloadFile(server, first.body.url),
    ]);
    expect(again.equals(original)).toBe(true);
  });

  it('fails a photo without a plate with code 803 and gives the credits back', async () => {
    const key = await server.createKey(10);
    const client = api(server, key);
    const created = await client.postForm('/jobs', evalPhotoForm(NO_PLATE_PHOTO));
    expect(created.status).toBe(202);
    expect(created.body.quota.remaining).toBe(5);
    const done = await client.waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'failed', result: false, code: 803, error: { code: 803 } });
    expect(done.body.quota.remaining).toBe(10);
  });

  it('takes the source from a url in a JSON body', async () => {
    const photo = readFileSync(path.join(SHARED, 'eval', PLATE_PHOTO.file));
    const origin = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo),
    );
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    try {
      const client = api(server, await server.createKey(5));
      const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/car.jpg`;
      const created = await client.postJson('/jobs', { mode: 'plate', url });
      expect(created.status).toBe(202);
      expect((await client.waitForJob(created.body.id)).body.status).toBe('success');
    } finally {
      origin.close();
    }
  });

  it('answers 402 without creating a job when credits are short', async () => {
    const client = api(server, await server.createKey(4));
    const response = await client.postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file));
    expect(response).toEqual({
      status: 402,
      body: { code: 402, message: expect.stringMatching(/credits/), result: false },
    });
  });

  it('replays a finished job for a repeated Idempotency-Key and refuses a different body under it', async () => {
    const client = api(server, await server.createKey(10));
    const first = await client.postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file), {
      'idempotency-key': 'order-42',
    });
    expect(first.status).toBe(202);
    await client.waitForJob(first.body.id);

    const replay = await client.postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file), {
      'idempotency-key': 'order-42',
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: first.body.id, status: 'success', quota: { remaining: 5 } });

    const other = await client.postForm(
      '/jobs',
      evalPhotoForm(PLATE_PHOTO.file, { plate_color: '#ffffff' }),
      {
        'idempotency-key': 'order-42',
      },
    );
    expect(other.status).toBe(409);
    expect(other.body.result).toBe(false);

    const tooLong = await client.postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file), {
      'idempotency-key': 'k'.repeat(201),
    });
    expect(tooLong.status).toBe(400);
  });

  it('accepts Authorization: Bearer and refuses unknown keys with 401', async () => {
    const key = await server.createKey(5);
    const created = await api(server, key).postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file));
    const bearer = await api(server).get(`/jobs/${created.body.id}`, { authorization: `Bearer ${key}` });
    expect(bearer.status).toBe(200);

    const unknown = await api(server, 'pjk_not_a_real_key').get(`/jobs/${created.body.id}`);
    expect(unknown).toEqual({ status: 401, body: { code: 401, message: expect.any(String), result: false } });
    const anotherOwner = await api(server, await server.createKey(0)).get(`/jobs/${created.body.id}`);
    expect(anotherOwner.status).toBe(404);
  });

  it('refuses a file that is not a JPG, PNG or WEBP with 415, judged by its bytes', async () => {
    const client = api(server, await server.createKey(5));
    const form = new FormData();
    form.append('file', new Blob(['GIF89a not really'], { type: 'image/jpeg' }), 'car.jpg');
    const response = await client.postForm('/jobs', form);
    expect(response.status).toBe(415);
  });

  it('refuses a request over 6 MB with API Gateway’s own 413, before any work', async () => {
    const client = api(server, await server.createKey(5));
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(7 * 1024 * 1024, 1)]), 'huge.jpg');
    const response = await client.postForm('/jobs', form);
    // Its event is over Lambda's 6 MB: no function runs, and API Gateway answers in its own shape.
    expect(response).toEqual({ status: 413, body: { message: 'Request Entity Too Large' } });
  });

  it('lets the master key run a job without any account', async () => {
    const client = api(server, server.masterKey);
    const created = await client.postForm('/jobs', evalPhotoForm(PLATE_PHOTO.file));
    expect(created.status).toBe(202);
    expect(created.body.quota).toBeUndefined();
    expect((await client.waitForJob(created.body.id)).body.status).toBe('success');
  });
});
