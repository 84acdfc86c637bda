import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackage } from '../../../bin/packages.ts';
import { eventually } from '../../support/eventually.ts';
import { eu1WithPixelatedPlate } from '../../support/pixelated-plate.ts';
import {
  api,
  hasShared,
  REPO_ROOT,
  type RunningServer,
  SHARED,
  startServer,
} from '../support/local-server.ts';

const run = promisify(execFile);

/** A receiver on this machine, as a developer runs one next to `npm start`. */
async function startReceiver() {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * The path of a new user's first hour (issue 25), on `npm start` as it starts by default (loopback, a
 * terminal's log format): each stumble found then is either gone or answered here.
 */
describe.skipIf(!hasShared)('the first hour of a new user', () => {
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let scratch: string;
  let key: string;
  const photo = path.join(SHARED, 'eval', 'plates/eu/eu1.jpg');

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-first-hour-'));
    receiver = await startReceiver();
    // '' leaves OUTBOUND_ALLOW_LOOPBACK to npm start, as a user's shell does; text is what a terminal gets.
    server = await startServer({ OUTBOUND_ALLOW_LOOPBACK: '', LOG_FORMAT: 'text' });
    key = await server.createKey(40);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        PHOTO_JOBS_API_KEY: key,
        PHOTO_JOBS_BASE_URL: server.origin,
        DATA_DIR: server.dataDir,
      },
    });

  it('says in its banner that webhooks may go to this machine, since it listens on loopback only', () => {
    expect(server.output()).toMatch(
      /webhooks may go to receivers on this machine .* listens on 127\.0\.0\.1 only/,
    );
  });

  it('runs a job from a .mjs script in a project made by npm init that installed the packed client', async () => {
    const app = path.join(scratch, 'storefront');
    await mkdir(app);
    await run('npm', ['init', '-y'], { cwd: app });
    // The client has no dependencies, so its tarball installs offline with an empty npm cache.
    const { tarball } = await buildPackage('client', scratch);
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app });
    await writeFile(
      path.join(app, 'main.mjs'),
      [
        "import { createClient } from 'photo-jobs-client';",
        'const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.KEY });',
        "const job = await client.createJob({ mode: 'plate', file: process.env.PHOTO, webhook_url: process.env.HOOK });",
        'console.log(JSON.stringify(await client.waitForJob(job.id)));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['main.mjs'], {
      cwd: app,
      env: { ...process.env, BASE_URL: server.origin, KEY: key, PHOTO: photo, HOOK: receiver.url },
    });
    const job = JSON.parse(stdout.trim()) as { id: string; status: string; url: string };
    expect(job.status).toBe('success');

    // The webhook reached the receiver on this machine.
    await eventually(
      () => receiver.bodies.length,
      (received) => received > 0,
      { timeoutMs: 10_000 },
    );
    expect(receiver.bodies.map((body) => JSON.parse(body).id ?? JSON.parse(body).job_id)).toContain(job.id);

    // On a terminal a successful job reads as a handful of lines, none an error.
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes(job.id));
    expect(lines.filter((line) => / INFO /.test(line)).length).toBeLessThanOrEqual(5);
    expect(lines.filter((line) => / (ERROR|WARN) /.test(line))).toEqual([]);
    expect(lines.every((line) => !line.trimStart().startsWith('{'))).toBe(true);

    // HEAD answers wherever GET does, without a body.
    const head = await fetch(new URL(job.url, server.origin), {
      method: 'HEAD',
      headers: { 'x-api-key': key },
      redirect: 'manual',
    });
    expect(head.status).toBeLessThan(400);
    expect(await head.text()).toBe('');
    const quota = await fetch(`${server.baseUrl}/quota`, { method: 'HEAD', headers: { 'x-api-key': key } });
    expect([quota.status, await quota.text()]).toEqual([200, '']);
  }, 300_000);

  it('flags a plate left visible, and with --require-plate fails the job with 803 and refunds', async () => {
    // The plate pixelated: the car still shows its rear plate, but nothing the rule would fill.
    const pixelated = path.join(scratch, 'pixelated.jpg');
    await writeFile(pixelated, await eu1WithPixelatedPlate(await readFile(photo)));

    const flagged = await cli([
      'jobs',
      'create',
      '--mode',
      'studio_background',
      '--file',
      pixelated,
      '--wait',
    ]);
    expect(flagged.stdout).toMatch(/: success/);
    expect(flagged.stdout).toMatch(/WARNING plate may be visible/);

    const before = (await api(server, key).get('/quota')).body.quota.remaining as number;
    const refused = await cli([
      'jobs',
      'create',
      '--mode',
      'studio_background',
      '--file',
      pixelated,
      '--require-plate',
      '--wait',
    ]).catch((error: { code: number; stdout: string }) => error);
    expect(refused).toMatchObject({ code: 1 });
    expect(refused.stdout).toMatch(/: failed\n\s+error 803: .*front or rear/);
    expect((await api(server, key).get('/quota')).body.quota.remaining).toBe(before);
  }, 300_000);

  it('keys create says which data it used, and that the server runs on it', async () => {
    const { stdout } = await cli(['keys', 'create', '--credits', '1']);
    expect(stdout).toContain(
      `stored in ${server.dataDir} (table photo-jobs-local), through the server running on it`,
    );
  });

  it('a second npm start on the same port says so in one line and exits 1', async () => {
    const port = new URL(server.origin).port;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-clash-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
        cwd: REPO_ROOT,
        env: { ...process.env, PORT: port, DATA_DIR: dataDir, MODELS_OFFLINE: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      const lines = stderr.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
      expect(lines).toEqual([
        `Port ${port} on 127.0.0.1 is already in use (another npm start?): stop that server, or set PORT=<another port>`,
      ]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
