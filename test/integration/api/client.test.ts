import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type JobEnvelope, PhotoJobsError, verifyWebhook } from '../../../client/index.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import { REPO_ROOT, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

const run = promisify(execFile);
/** Photo files as a user has them on disk, each with a plate for the marker runner (the subject is the client). */
const PHOTOS = ['eu1.jpg', 'eu3.jpg', 'AYO9034.jpg', 'FZB9581.jpg'];
let photosDir: string;
const photo = (file: string) => path.join(photosDir, path.basename(file));

/** One webhook receiver on loopback that keeps each delivery's raw bytes and signature header. */
async function startReceiver() {
  const received: { body: string; signature: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['x-service-signature'] ?? ''),
      });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('photo-jobs/client and the CLI against npm start', () => {
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let secret: string;

  beforeAll(async () => {
    photosDir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-photos-'));
    await Promise.all(
      PHOTOS.map(async (name, seed) => writeFile(path.join(photosDir, name), await markedPhoto({ seed }))),
    );
    server = await startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true' });
    receiver = await startReceiver();
    ({ key, webhookSecret: secret } = await server.createKeyWithSecret(100));
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    if (photosDir) await rm(photosDir, { recursive: true, force: true });
  });

  it('creates a job from a file path, waits for it, downloads the result and verifies the webhook', async () => {
    const client = createClient({ baseUrl: server.origin, apiKey: key });
    const created = await client.createJob({
      mode: 'plate',
      file: photo('eu/eu1.jpg'),
      webhook_url: receiver.url,
    });
    expect(created.status).toBe('queued');
    const seen: string[] = [];
    const job = await client.waitForJob(created.id, { onProgress: (state) => seen.push(state.status) });
    expect(job.status).toBe('success');
    expect(seen.at(-1)).toBe('success');
    const bytes = await client.download(job.url!);
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect((await client.getQuota()).quota.remaining).toBe(95);

    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const delivery = receiver.received[0]!;
    expect((JSON.parse(delivery.body) as JobEnvelope).job_id).toBe(created.id);
    expect(verifyWebhook(delivery.body, delivery.signature, secret)).toBe(true);
    expect(verifyWebhook(`${delivery.body} `, delivery.signature, secret)).toBe(false);
    expect(verifyWebhook(delivery.body, delivery.signature, `${secret}x`)).toBe(false);
    // A captured delivery replayed an hour later is refused.
    expect(
      verifyWebhook(delivery.body, delivery.signature, secret, {
        nowSeconds: Math.floor(Date.now() / 1000) + 3600,
      }),
    ).toBe(false);
  });

  it('lists every job across pages and reports errors with the spec’s status, code and message', async () => {
    const client = createClient({ baseUrl: `${server.origin}/api/v1`, apiKey: key });
    // The photo as bytes, and as a direct upload named by its upload_id.
    const fromBytes = await client.createJob({
      mode: 'analyze',
      file: await readFile(photo('br/AYO9034.jpg')),
    });
    const uploaded = await client.upload(photo('br/FZB9581.jpg'));
    const fromUpload = await client.createJob({ mode: 'analyze', upload_id: uploaded.upload_id });
    for (const job of [fromBytes, fromUpload]) {
      expect((await client.waitForJob(job.id)).output?.analysis?.photo_type.value).toBe('exterior');
    }
    const ids: string[] = [];
    for await (const job of client.listJobs({ pageSize: 1 })) ids.push(job.id);
    expect(ids).toHaveLength(3);
    expect(ids.slice(0, 2)).toEqual([fromUpload.id, fromBytes.id]);

    const stranger = createClient({ baseUrl: server.origin, apiKey: 'pjk_not_a_key_of_this_server_000000' });
    const error = await stranger.getQuota().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PhotoJobsError);
    expect(error).toMatchObject({ status: 401, code: 401 });
    expect((error as PhotoJobsError).message).toMatch(/key/i);
    const missing = await client.getJob('job_0123456789abcdefghjkmnpq').catch((caught: unknown) => caught);
    expect(missing).toMatchObject({ status: 404, code: 404 });
  });

  it('runs `jobs create --wait --out` and `batches create --wait --out` from the CLI', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-cli-'));
    try {
      const env = { ...process.env, PHOTO_JOBS_API_KEY: key };
      const cli = (args: string[]) =>
        run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args, '--base-url', server.origin], {
          cwd: REPO_ROOT,
          env,
        });
      const hidden = path.join(dir, 'hidden.jpg');
      const job = await cli([
        'jobs',
        'create',
        '--mode',
        'plate',
        '--file',
        photo('eu/eu3.jpg'),
        '--wait',
        '--out',
        hidden,
      ]);
      // The state once, and the result as a URL to open.
      expect(job.stdout.match(/success/g)).toHaveLength(1);
      expect(job.stdout).toMatch(new RegExp(`result ${server.origin}/api/v1/results/job_\\w+/result\\.jpg`));
      // Where the plate was filled, as four corners in the saved file's pixels.
      expect(job.stdout).toMatch(/\n {2}plate at (\d+,\d+ ){3}\d+,\d+ \(score (0\.\d+|1)\)/);
      // Not a terminal: plain lines on stderr, one per state, no bar.
      expect(job.stderr).toMatch(/started/);
      expect((await readFile(hidden)).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

      const archive = path.join(dir, 'cars.zip');
      await run('python3', ['-m', 'zipfile', '-c', archive, photo('eu/eu1.jpg'), photo('eu/eu3.jpg')]);
      const results = path.join(dir, 'results.zip');
      const batch = await cli([
        'batches',
        'create',
        '--archive',
        archive,
        '--wait',
        '--out',
        results,
        '--json',
      ]);
      const body = JSON.parse(batch.stdout.trim().split('\n').pop()!);
      expect(body.batch).toMatchObject({ status: 'completed', counts: { total: 2, succeeded: 2 } });
      expect((await readFile(results)).subarray(0, 2).toString()).toBe('PK');

      const refused = await cli(['jobs', 'get', 'job_0123456789abcdefghjkmnpq']).catch((caught) => caught);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^404/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
