import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbAssets, dynamodbFiles } from '#aws/dynamodb-files.ts';
import type { Asset } from '#core/files/asset-record.ts';
import { assetFileRecord } from '#core/files/asset-rules.ts';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import { registerResultFiles } from '#core/use-cases/register-result-files.ts';
import { LOCAL_TABLE } from '../../../local/stack.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import { aJob } from '../../unit/core/fixtures.ts';
import {
  type ApiResponse,
  adminDynamo,
  api,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

const DAY = 24 * 3600 * 1000;

const imageForm = (bytes: Buffer, name: string, type = 'image/jpeg'): FormData => {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  return form;
};

describe('assets and files on the local server', () => {
  let server: RunningServer;
  let smallJpeg: Buffer;
  let dynamodb: DynamoDBClient;

  beforeAll(async () => {
    server = await startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true' });
    smallJpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    dynamodb = await adminDynamo(server);
  });
  afterAll(async () => {
    dynamodb?.destroy();
    await server?.stop();
  });

  const del = async (route: string, key?: string): Promise<ApiResponse> => {
    const response = await fetch(`${server.baseUrl}${route}`, {
      method: 'DELETE',
      headers: key ? { 'x-api-key': key } : {},
    });
    return { status: response.status, body: (await response.json()) as ApiResponse['body'] };
  };
  const upload = async (key: string, name = 'car.jpg') => {
    const created = await api(server, key).postForm('/assets', imageForm(smallJpeg, name));
    expect(created.status).toBe(201);
    return created.body as { asset_id: string; expires_at: string; original_name: string };
  };
  const fileOf = async (key: string, assetId: string) => {
    const listed = await api(server, key).get('/files?limit=100');
    return listed.body.files.find((file: { asset_id: string }) => file.asset_id === assetId);
  };

  it('stores an uploaded file for 7 days and answers 201 with the asset', async () => {
    const before = Date.now();
    const created = await api(server, await server.createKey(0)).postForm(
      '/assets',
      imageForm(smallJpeg, 'Front left.jpg'),
    );
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['asset_id', 'expires_at', 'original_name']);
    expect(created.body.asset_id).toMatch(/^ast_[0-9a-z]{24}$/);
    expect(created.body.original_name).toBe('Front left.jpg');
    const expiresAt = Date.parse(created.body.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * DAY + 1000);
  });

  it('fetches a url upload and names it after the URL’s last path segment', async () => {
    const origin = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'image/jpeg' }).end(smallJpeg),
    );
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/photos/rear%20view.jpg?w=800`;
      const created = await api(server, await server.createKey(0)).postJson('/assets', { url });
      expect(created.status).toBe(201);
      expect(created.body.original_name).toBe('rear view.jpg');
    } finally {
      origin.close();
    }
  });

  it('requires an API key (401) and an image (415)', async () => {
    const anonymous = await api(server).postForm('/assets', imageForm(smallJpeg, 'car.jpg'));
    expect(anonymous).toEqual({
      status: 401,
      body: { code: 401, message: expect.any(String), result: false },
    });
    expect((await api(server, 'pjk_not_a_real_key').get('/files')).status).toBe(401);
    const gif = await api(server, await server.createKey(0)).postForm(
      '/assets',
      imageForm(Buffer.from('GIF89a not really'), 'car.jpg'),
    );
    expect(gif.status).toBe(415);
  });

  it('runs a job from an asset, its owner’s or (master) anyone’s, never another key’s', async () => {
    const key = await server.createKey(5);
    const photo = await markedPhoto();
    const asset = (await api(server, key).postForm('/assets', imageForm(photo, 'eu1.jpg'))).body;

    const created = await api(server, key).postJson('/jobs', { mode: 'plate', asset_id: asset.asset_id });
    expect(created.status).toBe(202);
    expect((await api(server, key).waitForJob(created.body.id)).body.status).toBe('success');

    const stranger = await api(server, await server.createKey(5)).postJson('/jobs', {
      asset_id: asset.asset_id,
    });
    expect(stranger).toEqual({
      status: 404,
      body: { code: 404, message: `Asset ${asset.asset_id} does not exist`, result: false },
    });
    const byMaster = await api(server, server.masterKey).postJson('/jobs', { asset_id: asset.asset_id });
    expect(byMaster.status).toBe(202);
    await api(server, server.masterKey).waitForJob(byMaster.body.id);
  });

  it('answers 410 for an expired asset that is still on record', async () => {
    const key = await server.createKey(5);
    const created = new Date(Date.now() - 8 * DAY);
    const asset: Asset = {
      id: 'ast_expiredexpiredexpired000',
      ownerId: keyIdOf(hashSecret(key)),
      fileId: 999_999,
      key: 'assets/ast_expiredexpiredexpired000/car.jpg',
      originalName: 'car.jpg',
      contentType: 'image/jpeg',
      bytes: smallJpeg.length,
      sha256: 'unused',
      createdAt: created.toISOString(),
      expiresAt: new Date(created.getTime() + 7 * DAY).toISOString(),
    };
    const file = assetFileRecord(asset);

    await dynamodbAssets(dynamodb, LOCAL_TABLE, () => new Date()).insert(asset, file);

    const response = await api(server, key).postJson('/jobs', { asset_id: asset.id });
    expect(response).toEqual({
      status: 410,
      body: { code: 410, message: `Asset ${asset.id} expired at ${asset.expiresAt}`, result: false },
    });
    expect(await fileOf(key, asset.id)).toBeUndefined();
  });

  it('lists only the caller’s files, newest first, page by page; the master key sees all', async () => {
    const alice = await server.createKey(0);
    const bob = await server.createKey(0);
    const mine = [
      await upload(alice, 'a1.jpg'),
      await upload(alice, 'a2.jpg'),
      await upload(alice, 'a3.jpg'),
    ];
    const theirs = await upload(bob, 'b1.jpg');

    const first = await api(server, alice).get('/files?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.files.map((file: { asset_id: string }) => file.asset_id)).toEqual([
      mine[2]!.asset_id,
      mine[1]!.asset_id,
    ]);
    expect(first.body.files[0]).toEqual({
      file_id: expect.any(Number),
      kind: 'asset',
      name: 'a3.jpg',
      content_type: 'image/jpeg',
      bytes: smallJpeg.length,
      url: null,
      job_id: null,
      asset_id: mine[2]!.asset_id,
      created_at: expect.any(String),
      expires_at: mine[2]!.expires_at,
    });
    expect(first.body.next_cursor).toBe(first.body.files[1].file_id);

    const second = await api(server, alice).get(`/files?limit=2&before=${first.body.next_cursor}`);
    expect(second.body).toEqual({
      files: [expect.objectContaining({ asset_id: mine[0]!.asset_id })],
      next_cursor: null,
    });

    const everything = await api(server, server.masterKey).get('/files?limit=100');
    const ids = everything.body.files.map((file: { asset_id: string }) => file.asset_id);
    expect(ids).toEqual(expect.arrayContaining([...mine.map((a) => a.asset_id), theirs.asset_id]));
    const fileIds = everything.body.files.map((file: { file_id: number }) => file.file_id);
    expect(fileIds).toEqual([...fileIds].sort((a, b) => b - a));
  });

  it('refuses a bad limit, cursor or file id with 400', async () => {
    const client = api(server, await server.createKey(0));
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'before=-1', 'before=1.5']) {
      expect((await client.get(`/files?${query}`)).status).toBe(400);
    }
    const key = await server.createKey(0);
    expect((await del('/files/abc', key)).status).toBe(400);
    expect((await del('/files/0', key)).status).toBe(400);
  });

  it('deletes a file once (200, then 404), only its owner’s, and the asset goes with it', async () => {
    const key = await server.createKey(5);
    const asset = await upload(key);
    const file = await fileOf(key, asset.asset_id);

    expect((await del(`/files/${file.file_id}`, await server.createKey(0))).status).toBe(404);
    expect(await del(`/files/${file.file_id}`, key)).toEqual({ status: 200, body: { result: true } });
    expect((await del(`/files/${file.file_id}`, key)).status).toBe(404);
    expect(await fileOf(key, asset.asset_id)).toBeUndefined();

    const job = await api(server, key).postJson('/jobs', { asset_id: asset.asset_id });
    expect(job.status).toBe(404);
    expect((await del('/files/987654321', key)).status).toBe(404);
  });

  it('lists registered result files with their result url, once, and deletes them', async () => {
    const key = await server.createKey(0);
    const job = aJob({
      id: 'job_resultresultresultresu',
      ownerId: keyIdOf(hashSecret(key)),
      status: 'success',
      finishedAt: new Date().toISOString(),
    });
    const results = [
      { name: 'result.jpg', key: `results/${job.id}/result.jpg`, contentType: 'image/jpeg', bytes: 1234 },
    ];
    const deps = {
      files: dynamodbFiles(dynamodb, LOCAL_TABLE, () => new Date()),
      clock: { now: () => new Date() },
    };
    expect(await registerResultFiles(deps, job, results)).toHaveLength(1);
    expect(await registerResultFiles(deps, job, results)).toEqual([]);

    const listed = await api(server, key).get('/files');
    expect(listed.body).toEqual({
      files: [
        expect.objectContaining({
          kind: 'result',
          name: 'result.jpg',
          job_id: job.id,
          asset_id: null,
          url: `/api/v1/results/${job.id}/result.jpg`,
        }),
      ],
      next_cursor: null,
    });
    expect((await del(`/files/${listed.body.files[0].file_id}`, key)).status).toBe(200);
    expect((await api(server, key).get('/files')).body.files).toEqual([]);
  });

  it('lists the result of a successful plate job among the owner’s files', async () => {
    const key = await server.createKey(5);
    const photo = await markedPhoto();
    const created = await api(server, key).postForm('/jobs', imageForm(photo, 'eu1.jpg'));
    expect(created.status).toBe(202);
    const done = await api(server, key).waitForJob(created.body.id);
    expect(done.body.status).toBe('success');

    const listed = await api(server, key).get('/files');
    expect(listed.body.files).toContainEqual(
      expect.objectContaining({ kind: 'result', job_id: created.body.id, url: done.body.url }),
    );
  });
});
