import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openZipBuffer, zipBuffer } from '#aws/zip-archives.ts';
import { sniffImageType } from '#core/images.ts';
import { DEFAULT_ZIP_LIMITS, zipBudget } from '#core/limits/archive.ts';
import { verifySignature } from '#core/webhooks/signature.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import { bySoak } from '../../support/soak.ts';
import {
  type ApiResponse,
  api,
  batchDownload,
  REPO_ROOT,
  type RunningServer,
  startServer,
  untilWorkflowsIdle,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

/**
 * Photos for the marker runner (the subject here is batches, not vision): every fourth has no plate and
 * fails with 803, the others succeed. Made once, in `beforeAll`.
 */
let PHOTOS: Buffer[] = [];
const CAR = () => PHOTOS[0]!;

async function zipOf(files: Record<string, Buffer>): Promise<Buffer> {
  return zipBuffer(
    Object.entries(files).map(([name, data]) => ({ name, data, compress: !name.endsWith('.jpg') })),
  );
}

function batchForm(archive: Buffer, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('archive', new Blob([archive], { type: 'application/zip' }), 'photos.zip');
  return form;
}

/**
 * A ZIP large enough that pausing after two photos leaves some queued behind the running ones (the batch
 * runs a few at once, each in a fraction of a second without models); 50 in the soak tier.
 */
const PHOTOS_IN_ZIP = bySoak(30, 50);

/** `count` photos as `<folder>/<n>.jpg`. */
function viewPhotos(count: number, folder = 'views'): Record<string, Buffer> {
  return Object.fromEntries(
    PHOTOS.slice(0, count).map((photo, i) => [`${folder}/${String(i).padStart(2, '0')}.jpg`, photo]),
  );
}

async function unzip(archive: Buffer): Promise<Record<string, Buffer>> {
  const budget = zipBudget(DEFAULT_ZIP_LIMITS);
  const opened = await openZipBuffer(archive, DEFAULT_ZIP_LIMITS);
  const files: Record<string, Buffer> = {};
  for (const entry of opened.listing.files) {
    const chunks: Buffer[] = [];
    for await (const chunk of opened.entry(entry, budget)) chunks.push(chunk);
    files[entry.name] = Buffer.concat(chunks);
  }
  return files;
}

describe('batches on the local server', () => {
  let server: RunningServer;

  beforeAll(async () => {
    // Webhooks go to a receiver on loopback here.
    [server, PHOTOS] = await Promise.all([
      startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true' }),
      Promise.all(Array.from({ length: 50 }, (_, seed) => markedPhoto({ plate: seed % 4 !== 3, seed }))),
    ]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const client = (key: string) => {
    const base = api(server, key);
    return {
      ...base,
      async waitForBatch(
        batchId: string,
        until: (batch: ApiResponse['body']) => boolean,
        timeoutMs = 90_000,
      ): Promise<ApiResponse['body']> {
        // A polling client reads past a passing non-200 (a 503 or a gateway timeout on a loaded machine),
        // as the spec's clients are told to; only the last answer must be the batch.
        const answer = await eventually(
          () => base.get(`/batches/${batchId}`),
          (response) => response.status === 200 && until(response.body.batch),
          { timeoutMs, intervalMs: 200 },
        );
        if (answer.status !== 200)
          throw new Error(`GET batch answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        const batch = answer.body.batch;
        if (!until(batch)) throw new Error(`batch never got there: ${JSON.stringify(batch?.counts)}`);
        return batch;
      },
      /** GET …/download: 202 with Retry-After while a workflow step builds it, then the 302 and the archive. */
      async download(batchId: string, query = '') {
        const response = await batchDownload(server, key, batchId, query);
        if (response.status !== 302) {
          return {
            status: response.status,
            body: await response.json(),
            files: {} as Record<string, Buffer>,
          };
        }
        const location = response.headers.get('location')!;
        const archive = await fetch(location);
        expect(archive.status).toBe(200);
        return { status: 302, body: null, files: await unzip(Buffer.from(await archive.arrayBuffer())) };
      },
      async quota() {
        return (await base.get('/quota')).body.quota as { remaining: number; used_total: number };
      },
    };
  };
  const finished = (batch: ApiResponse['body']) =>
    batch.status === 'completed' || batch.status === 'cancelled';
  const settled = (batch: ApiResponse['body']) => finished(batch) && batch.counts.processing === 0;

  let mixedBatch: { key: string; id: string } | undefined;

  it('processes a ZIP of photos to completion, keeps its folders, and charges 5 per success', async () => {
    const key = await server.createKey(100);
    const c = client(key);
    const archive = await zipOf({
      'plates/eu/eu3.jpg': PHOTOS[1]!,
      'plates/us/us4.jpg': PHOTOS[2]!,
      ...viewPhotos(2),
      'notes.txt': Buffer.from('shot on a sunny day'),
      'broken/corrupt.jpg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 0x42)]),
      '__MACOSX/plates/._eu3.jpg': Buffer.from('resource fork'),
      'more.zip': await zipOf({ 'x.jpg': CAR() }),
    });
    const created = await c.postForm(
      '/batches',
      batchForm(archive, { mode: 'plate', plate_color: '#ff00ff' }),
    );
    expect(created.status).toBe(202);
    const id = created.body.batch.id as string;
    expect(created.body).toMatchObject({
      status_url: `/api/v1/batches/${id}`,
      batch: {
        status: 'unpacking',
        mode: 'plate',
        plate_color: '#ff00ff',
        counts: { total: 7 },
      },
    });

    const done = await c.waitForBatch(id, finished);
    expect(done.status).toBe('completed');
    expect(done.counts).toMatchObject({ total: 7, skipped: 2 });
    const byName = Object.fromEntries(done.items.map((item: { name: string }) => [item.name, item]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        'broken/corrupt.jpg',
        'more.zip',
        'notes.txt',
        'plates/eu/eu3.jpg',
        'plates/us/us4.jpg',
        'views/00.jpg',
        'views/01.jpg',
      ].sort(),
    );
    expect(byName['notes.txt']).toMatchObject({ status: 'skipped', error: { code: 415 } });
    expect(byName['more.zip']).toMatchObject({ status: 'skipped', error: { code: 415 } });
    expect(byName['broken/corrupt.jpg']).toMatchObject({ status: 'failed', error: { code: 400 } });
    expect(byName['plates/eu/eu3.jpg']).toMatchObject({
      status: 'succeeded',
      result: expect.stringMatching(/result\.jpg$/),
    });
    const { succeeded, failed, skipped, total } = done.counts;
    expect(succeeded + failed + skipped).toBe(total);
    expect(succeeded).toBeGreaterThanOrEqual(1);
    expect(done.cost_credits).toBe(5 * succeeded);
    expect(await c.quota()).toMatchObject({ remaining: 100 - 5 * succeeded, used_total: 5 * succeeded });

    const download = await c.download(id);
    expect(download.status).toBe(302);
    const manifest = JSON.parse(download.files['manifest.json']!.toString());
    expect(manifest).toMatchObject({
      batch_id: id,
      status: 'completed',
      partial: false,
      counts: done.counts,
    });
    expect(manifest.items.map((item: { name: string; status: string }) => [item.name, item.status])).toEqual(
      done.items.map((item: { name: string; status: string }) => [item.name, item.status]),
    );
    const outputs = manifest.items.flatMap((item: { outputs: string[] }) => item.outputs);
    expect(outputs).toContain('plates/eu/eu3.jpg');
    expect(Object.keys(download.files).sort()).toEqual([...outputs, 'manifest.json'].sort());
    for (const name of outputs) expect(sniffImageType(download.files[name]!)).toBe('image/jpeg');
    expect(manifest.items.find((item: { name: string }) => item.name === 'broken/corrupt.jpg')).toMatchObject(
      {
        outputs: [],
        error: { code: 400 },
      },
    );
    mixedBatch = { key, id };
  });

  it('retries only the failed items, each as a new job', async () => {
    const { key, id } = mixedBatch!;
    const c = client(key);
    const before = (await c.get(`/batches/${id}`)).body.batch;
    const jobOf = (batch: typeof before) =>
      Object.fromEntries(
        batch.items.map((item: { name: string; job_id: string }) => [item.name, item.job_id]),
      );
    const failedNames = before.items
      .filter((item: { status: string }) => item.status === 'failed')
      .map((item: { name: string }) => item.name);
    expect(failedNames).toContain('broken/corrupt.jpg');

    const retried = await c.postForm(`/batches/${id}/retry`, new FormData());
    expect(retried.status).toBe(200);
    expect(retried.body.batch.status).toBe('processing');
    const after = await c.waitForBatch(id, finished);
    for (const item of after.items) {
      if (failedNames.includes(item.name)) {
        expect(item.job_id).not.toBe(jobOf(before)[item.name]);
        expect(item.attempts).toBe(2);
      } else {
        expect(item.job_id).toBe(jobOf(before)[item.name]);
      }
    }
    expect(after.counts.succeeded).toBeGreaterThanOrEqual(before.counts.succeeded);
    expect(await c.quota()).toMatchObject({
      remaining: 100 - 5 * after.counts.succeeded,
      used_total: 5 * after.counts.succeeded,
    });
    // The corrupt photo fails every time, so there is always a failure to retry again.
    expect(after.items.find((item: { name: string }) => item.name === 'broken/corrupt.jpg').status).toBe(
      'failed',
    );
    expect((await c.postForm(`/batches/${id}/retry`, new FormData())).status).toBe(200);
    await c.waitForBatch(id, finished);
  });

  it(`takes a ${PHOTOS_IN_ZIP}-photo ZIP, pauses and resumes it, and returns a ZIP with a manifest; credits = 5 × succeeded`, async () => {
    const key = await server.createKey(300);
    const c = client(key);
    const archive = await zipOf(viewPhotos(PHOTOS_IN_ZIP, 'cars'));
    const created = await c.postForm('/batches', batchForm(archive));
    expect(created.status).toBe(202);
    const id = created.body.batch.id as string;
    expect(created.body.batch.counts).toMatchObject({ total: PHOTOS_IN_ZIP, skipped: 0 });

    await c.waitForBatch(id, (batch) => batch.counts.succeeded + batch.counts.failed >= 2);
    const paused = await c.postForm(`/batches/${id}/pause`, new FormData());
    expect(paused.status).toBe(200);
    expect(paused.body.batch).toMatchObject({ status: 'paused', pause_reason: 'requested' });
    // The running items finish; nothing new starts.
    const drained = await c.waitForBatch(id, (batch) => batch.counts.processing === 0);
    expect(drained.status).toBe('paused');
    expect(drained.counts.queued).toBeGreaterThan(0);
    // Once no workflow runs, nothing is left that could start a photo: a paused batch stays as it is.
    await untilWorkflowsIdle(server);
    const still = (await c.get(`/batches/${id}`)).body.batch;
    expect(still.counts).toEqual(drained.counts);
    expect(await c.quota()).toMatchObject({ remaining: 300 - 5 * still.counts.succeeded });

    // A partial archive on request while the batch is not finished; a plain download is 409.
    expect((await c.download(id)).status).toBe(409);
    if (still.counts.succeeded > 0) {
      const partial = await c.download(id, '?partial=true');
      const manifest = JSON.parse(partial.files['manifest.json']!.toString());
      expect(manifest).toMatchObject({ partial: true, status: 'paused', counts: still.counts });
    }

    const resumed = await c.postForm(`/batches/${id}/resume`, new FormData());
    expect(resumed.body.batch.status).toBe('processing');
    const done = await c.waitForBatch(id, finished, 150_000);
    expect(done.status).toBe('completed');
    expect(done.counts.succeeded + done.counts.failed).toBe(PHOTOS_IN_ZIP);
    expect(done.cost_credits).toBe(5 * done.counts.succeeded);
    expect(await c.quota()).toMatchObject({
      remaining: 300 - 5 * done.counts.succeeded,
      used_total: 5 * done.counts.succeeded,
    });

    const download = await c.download(id);
    expect(download.status).toBe(302);
    const manifest = JSON.parse(download.files['manifest.json']!.toString());
    expect(manifest.items).toHaveLength(PHOTOS_IN_ZIP);
    expect(manifest.counts).toEqual(done.counts);
    const succeededNames = done.items
      .filter((item: { status: string }) => item.status === 'succeeded')
      .map((item: { name: string }) => item.name)
      .sort();
    expect(
      Object.keys(download.files)
        .filter((name) => name !== 'manifest.json')
        .sort(),
    ).toEqual(succeededNames);
    for (const item of manifest.items) {
      expect(item.outputs).toEqual(item.status === 'succeeded' ? [item.name] : []);
    }
  });

  it('cancels mid-way: waiting items never reserve, running ones release, nothing more starts', async () => {
    const key = await server.createKey(300);
    const c = client(key);
    const created = await c.postForm('/batches', batchForm(await zipOf(viewPhotos(50))));
    const id = created.body.batch.id as string;
    await c.waitForBatch(id, (batch) => batch.counts.succeeded + batch.counts.failed >= 1);
    const cancelled = await c.postForm(`/batches/${id}/cancel`, new FormData());
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.batch.status).toBe('cancelled');
    const done = await c.waitForBatch(id, settled);
    expect(done.counts.cancelled).toBeGreaterThan(0);
    expect(done.counts.queued).toBe(0);
    expect(await c.quota()).toMatchObject({
      remaining: 300 - 5 * done.counts.succeeded,
      used_total: 5 * done.counts.succeeded,
    });
    // Moves that make no sense now.
    expect((await c.postForm(`/batches/${id}/resume`, new FormData())).status).toBe(409);
    expect((await c.postForm(`/batches/${id}/pause`, new FormData())).status).toBe(409);
    expect((await c.postForm(`/batches/${id}/cancel`, new FormData())).status).toBe(200);
  });

  it('refuses a zip bomb (413), a traversal entry (400) and a non-ZIP (415), naming the reason', async () => {
    const key = await server.createKey(50);
    const c = client(key);
    // A 200 MB entry from a 200 KB deflate stream, declared as what it is.
    const bombData = deflateRawSync(Buffer.alloc(200 * 1024 * 1024));
    const bomb = await zipOf({ 'ok.jpg': CAR() });
    const patched = patchedBomb(bomb, bombData);
    const bombAnswer = await c.postForm('/batches', batchForm(patched));
    expect(bombAnswer).toMatchObject({
      status: 413,
      body: { code: 413, message: expect.stringMatching(/limit: /) },
    });

    // yazl refuses to write `..` names: patched in afterwards, as a hostile tool would write them.
    const traversal = await zipOf({
      'ok.jpg': CAR(),
      'zzzzz/etc/evil.jpg': CAR(),
    });
    for (let at = traversal.indexOf('zzzzz/etc'); at >= 0; at = traversal.indexOf('zzzzz/etc', at))
      traversal.write('../..', at, 'latin1');
    const traversalAnswer = await c.postForm('/batches', batchForm(traversal));
    expect(traversalAnswer).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/climbs out/) },
    });

    const notZip = await c.postForm('/batches', batchForm(CAR()));
    expect(notZip).toMatchObject({ status: 415, body: { message: expect.stringMatching(/not a ZIP/) } });

    const analyze = await c.postForm('/batches', batchForm(await zipOf(viewPhotos(1)), { mode: 'analyze' }));
    expect(analyze.status).toBe(400);
    expect(await c.quota()).toMatchObject({ remaining: 50 });
  });

  it('tells the key’s webhook once when the batch completes, signed like job webhooks, and nothing per item', async () => {
    const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/batches`;
      const key = await server.createKey(50, ['--webhook', url]);
      const secret = await webhookSecretOf(server, key);
      const c = client(key);
      const created = await c.postForm('/batches', batchForm(await zipOf(viewPhotos(3))));
      const id = created.body.batch.id as string;
      const done = await c.waitForBatch(id, finished);
      // Once no workflow runs, every notice the batch will ever send has been sent: exactly one.
      await untilWorkflowsIdle(server);
      expect(received).toHaveLength(1);
      const [hook] = received;
      expect(hook!.headers).toMatchObject({ 'x-service-batch': id, 'x-service-event': 'batch.completed' });
      expect(
        verifySignature({ header: hook!.headers['x-service-signature'] as string, body: hook!.body, secret }),
      ).toBe(true);
      expect(JSON.parse(hook!.body).batch).toMatchObject({ id, status: 'completed', counts: done.counts });
    } finally {
      receiver.close();
    }
  });

  it('needs an account key, hides other owners’ batches and answers 409 while nothing is ready', async () => {
    const noKey = await api(server).postForm('/batches', batchForm(await zipOf(viewPhotos(1))));
    expect(noKey.status).toBe(401);
    const key = await server.createKey(20);
    const c = client(key);
    const created = await c.postForm('/batches', batchForm(await zipOf(viewPhotos(3))));
    const id = created.body.batch.id as string;
    const early = await c.download(id, '?partial=true');
    expect([302, 409]).toContain(early.status); // 409 until the first item has succeeded
    const stranger = client(await server.createKey(0));
    expect((await stranger.get(`/batches/${id}`)).status).toBe(404);
    expect((await stranger.postForm(`/batches/${id}/pause`, new FormData())).status).toBe(404);
    expect((await c.postForm(`/batches/${id}/explode`, new FormData())).status).toBe(404);
    await c.waitForBatch(id, finished);
  });
});

/**
 * Replace the only entry of `archive` by a deflate stream whose header honestly declares 200 MB: the
 * archive stays small, and the service must refuse it before inflating anything.
 */
function patchedBomb(_archive: Buffer, stream: Buffer): Buffer {
  const name = Buffer.from('bomb.jpg');
  const size = 200 * 1024 * 1024;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(stream.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(stream.length, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  const directory = Buffer.concat([central, name]);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(local.length + name.length + stream.length, 16);
  return Buffer.concat([local, name, stream, directory, end]);
}

/** A fresh signing secret for the key, as its owner gets one (`npm run cli -- keys rotate-webhook-secret`). */
async function webhookSecretOf(server: RunningServer, key: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'bin/cli.ts', 'keys', 'rotate-webhook-secret', key, '--json'],
    { cwd: REPO_ROOT, env: { ...process.env, DATA_DIR: server.dataDir, MASTER_KEY: server.masterKey } },
  );
  return (JSON.parse(stdout.trim().split('\n').pop()!) as { webhook_secret: string }).webhook_secret;
}
