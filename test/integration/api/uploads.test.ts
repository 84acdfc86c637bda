import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openZipBuffer, zipBuffer } from '#aws/zip-archives.ts';
import { DEFAULT_ZIP_LIMITS, zipBudget } from '#core/limits/archive.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  api,
  batchDownload,
  type JsonBody,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

const MB = 1024 * 1024;

/**
 * A 40-megapixel JPEG over 15 MB: a car with a marker plate (the subject here is uploads, not vision) at
 * 7746x5164 with fine noise (as a high-ISO camera writes it), made in memory for this run.
 */
async function bigPhoto(): Promise<Buffer> {
  const { data, info } = await sharp(await markedPhoto({ width: 7746, height: 5164, format: 'png' }))
    .raw()
    .toBuffer({ resolveWithObject: true });
  const noise = randomBytes(data.length);
  for (let i = 0; i < data.length; i++)
    data[i] = Math.max(0, Math.min(255, data[i]! + (noise[i]! & 31) - 16));
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .jpeg({ quality: 92, chromaSubsampling: '4:4:4' })
    .toBuffer();
}

describe('direct uploads on the local server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(WITHOUT_MODELS);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** POST /uploads, then the PUT a client makes with plain fetch. */
  async function upload(key: string, bytes: Buffer, contentType: string, declared = bytes.length) {
    const c = api(server, key);
    const opened = await c.postJson('/uploads', {
      content_type: contentType,
      filename: 'file',
      size: declared,
    });
    expect(opened.status).toBe(201);
    const put = await fetch(opened.body.url, { method: 'PUT', body: bytes, headers: opened.body.headers });
    return { id: opened.body.upload_id as string, opened: opened.body, put };
  }

  it('takes a 40 MP JPEG over 15 MB through /uploads to a successful job, charged once', async () => {
    const key = await server.createKey(20);
    const c = api(server, key);
    const photo = await bigPhoto();
    expect(photo.length).toBeGreaterThan(15 * MB);
    expect(photo.length).toBeLessThan(40 * MB);
    expect((await sharp(photo).metadata()).width! * (await sharp(photo).metadata()).height!).toBeGreaterThan(
      40_000_000,
    );
    const { id, opened, put } = await upload(key, photo, 'image/jpeg');
    expect(opened).toMatchObject({
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      max_bytes: photo.length,
      upload_id: expect.stringMatching(/^upl_/),
    });
    expect(new URL(opened.url).hostname).toBe('127.0.0.1');
    expect(put.status).toBe(200);

    const created = await c.postJson('/jobs', { upload_id: id, mode: 'plate' });
    expect(created.status).toBe(202);
    const done = await c.waitForJob(created.body.id, 240_000);
    expect(done.body).toMatchObject({ status: 'success' });
    const result = await fetch(new URL(done.body.url, server.origin));
    expect(result.status).toBe(200);
    expect((await sharp(Buffer.from(await result.arrayBuffer())).metadata()).format).toBe('jpeg');
    expect((await c.get('/quota')).body.quota).toMatchObject({ remaining: 15, used_total: 5 });
  });

  it('refuses what it must with a clear 4xx and never charges: wrong type or size at the PUT, unfinished, another tenant’s, not an image, a ZIP as a photo', async () => {
    const key = await server.createKey(20);
    const other = await server.createKey(20);
    const c = api(server, key);
    const photo = await markedPhoto();

    // Storage checks the signature: another type, or more bytes than declared, is 403 there.
    const opened = (await c.postJson('/uploads', { content_type: 'image/jpeg', size: photo.length })).body;
    const wrongType = await fetch(opened.url, {
      method: 'PUT',
      body: photo,
      headers: { 'content-type': 'image/png' },
    });
    expect(wrongType.status).toBe(403);
    const longer = await fetch(opened.url, {
      method: 'PUT',
      body: Buffer.concat([photo, Buffer.from('extra')]),
      headers: opened.headers,
    });
    expect(longer.status).toBe(403);
    // Nothing stored yet: 409; after the PUT, another tenant still gets 404.
    expect(await c.postJson('/jobs', { upload_id: opened.upload_id })).toMatchObject({
      status: 409,
      body: { code: 409, result: false, message: expect.stringMatching(/not been completed/) },
    });
    expect((await fetch(opened.url, { method: 'PUT', body: photo, headers: opened.headers })).status).toBe(
      200,
    );
    expect((await api(server, other).postJson('/jobs', { upload_id: opened.upload_id })).status).toBe(404);

    const text = await upload(key, Buffer.from('this is not a photo at all'), 'image/jpeg');
    expect(text.put.status).toBe(200);
    expect(await c.postJson('/jobs', { upload_id: text.id })).toMatchObject({
      status: 415,
      body: { code: 415 },
    });
    const form = new FormData();
    form.append('upload_id', text.id);
    expect((await c.postForm('/process', form)).status).toBe(415);

    const zip = await upload(
      key,
      await zipBuffer([{ name: 'a.txt', data: Buffer.from('a'), compress: true }]),
      'application/zip',
    );
    expect(await c.postJson('/jobs', { upload_id: zip.id })).toMatchObject({
      status: 415,
      body: { message: expect.stringMatching(/POST \/batches/) },
    });
    expect((await c.postJson('/batches', { upload_id: text.id })).status).toBe(415);
    expect(await c.postJson('/uploads', { content_type: 'image/gif', size: 10 })).toMatchObject({
      status: 415,
    });
    expect(await c.postJson('/uploads', { content_type: 'image/jpeg', size: 41 * MB })).toMatchObject({
      status: 413,
      body: { code: 413, result: false },
    });
    expect((await c.get('/quota')).body.quota).toMatchObject({ remaining: 20, used_total: 0 });

    // The photo upload serves as the source of an asset too, and of more than one job.
    expect((await c.postJson('/assets', { upload_id: opened.upload_id })).status).toBe(201);
  });

  it('takes a ZIP over 100 MB through /uploads to a finished batch whose download has a manifest', async () => {
    const key = await server.createKey(50);
    const c = api(server, key);
    const photos = await Promise.all([0, 1, 2].map((seed) => markedPhoto({ seed })));
    // Three photos and three 35 MB camera clips (incompressible, stored): the clips are skipped
    // items after their first bytes are read, so the batch is honest and still quick.
    const archive = await zipBuffer([
      ...photos.map((data, i) => ({ name: `photos/${i}.jpg`, data, compress: false })),
      ...[0, 1, 2].map((i) => ({ name: `clips/clip-${i}.mov`, data: randomBytes(35 * MB), compress: false })),
    ]);
    expect(archive.length).toBeGreaterThan(100 * MB);
    const { id, put } = await upload(key, archive, 'application/zip');
    expect(put.status).toBe(200);

    const created = await c.postJson('/batches', { upload_id: id, mode: 'plate' });
    expect(created).toMatchObject({
      status: 202,
      body: { batch: { status: 'unpacking', counts: { total: 6 } } },
    });
    const batchId = created.body.batch.id as string;
    const batch: JsonBody = await eventually(
      async () => {
        const polled = await c.get(`/batches/${batchId}`);
        expect(polled.status, JSON.stringify(polled.body)).toBe(200);
        return polled.body.batch;
      },
      (polled) => ['completed', 'failed', 'cancelled'].includes(polled.status),
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    expect(batch).toMatchObject({ status: 'completed', counts: { total: 6, skipped: 3 } });
    expect(batch.counts.succeeded + batch.counts.failed).toBe(3);
    expect(batch.counts.succeeded).toBeGreaterThan(0);
    expect((await c.get('/quota')).body.quota).toMatchObject({ used_total: 5 * batch.counts.succeeded });

    const response = await batchDownload(server, key, batchId);
    expect(response.status).toBe(302);
    const zip = Buffer.from(await (await fetch(response.headers.get('location')!)).arrayBuffer());
    const opened = await openZipBuffer(zip, DEFAULT_ZIP_LIMITS);
    const manifestEntry = opened.listing.files.find((entry) => entry.name === 'manifest.json')!;
    const chunks: Buffer[] = [];
    for await (const chunk of opened.entry(manifestEntry, zipBudget(DEFAULT_ZIP_LIMITS))) chunks.push(chunk);
    const manifest = JSON.parse(Buffer.concat(chunks).toString());
    expect(manifest).toMatchObject({ batch_id: batchId, status: 'completed', counts: batch.counts });
    expect(manifest.items.filter((item: { status: string }) => item.status === 'skipped')).toHaveLength(3);
  });
});
