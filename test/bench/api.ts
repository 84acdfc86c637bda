/**
 * `npm run bench -- api [--duration S] [--connections 50,200] [--keys N] [--profile]`: throughput and
 * latency of the embedded stack (`npm start` in its own process) under autocannon, for polling
 * (`GET /jobs/{id}`) and job creation (`POST /jobs`, a small photo, analyze), at each connection count.
 * Requests are spread over N API keys (default 32) so that the documented per-key throttling (100 a second,
 * 64 at once) stays out of the way at the targets; any 429 that happens anyway is counted and shown. The
 * jobs-in-flight cap is raised (it is a business rule, not a capacity limit), and the created jobs really
 * run. Polling is measured first, on jobs that have finished, so that the work of the jobs created by the
 * creation rows (their workflows and inference share the machine) does not land in the polling figures.
 * Each row also reports the CPU time the server's main thread (gateway, handlers and stand-ins: the
 * event loop every request goes through) spent per answered request, a figure that another process
 * on the machine does not change the way it changes throughput. `--profile` starts the server under
 * `node --cpu-prof` and leaves the profile in .cache/bench/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import sharp from 'sharp';
import { type RunningServer, SHARED, startServer } from '../integration/support/local-server.ts';

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const duration = Number(arg('--duration') ?? 10);
const connectionCounts = (arg('--connections') ?? '50,200').split(',').map(Number);
const keyCount = Number(arg('--keys') ?? 32);
const profile = process.argv.includes('--profile');
const only = arg('--only');

const TARGETS = { poll: 1500, create: 300, p99Ms: 300 };

interface Row {
  scenario: string;
  connections: number;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  /** Milliseconds of the server main thread's CPU time per request answered. */
  cpuMsPerRequest: number;
}

export async function benchApi(): Promise<void> {
  const profileDir = path.resolve('.cache', 'bench', 'profile');
  if (profile) await mkdir(profileDir, { recursive: true });
  const server = await startServer(
    { MAX_JOBS_IN_FLIGHT: '1000000' },
    { nodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  try {
    const keys = await createKeys(server, keyCount);
    const photo = await smallPhoto();
    const form = multipartBody(photo);
    // One job per key to poll, created before any timing starts.
    const jobIds: string[] = [];
    for (const key of keys) {
      const response = await fetch(`${server.baseUrl}/jobs`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': form.type },
        body: form.body,
      });
      jobIds.push(((await response.json()) as { id: string }).id);
    }
    await settled(server, keys, jobIds);
    const rows: Row[] = [];
    for (const connections of only === 'create' ? [] : connectionCounts) {
      rows.push(
        await run('GET /jobs/{id}', connections, server, keys, (i) => ({
          method: 'GET',
          path: `/api/v1/jobs/${jobIds[i % keys.length]}`,
        })),
      );
    }
    for (const connections of only === 'poll' ? [] : connectionCounts) {
      rows.push(
        await run('POST /jobs (analyze)', connections, server, keys, () => ({
          method: 'POST',
          path: '/api/v1/jobs',
          headers: { 'content-type': form.type },
          body: form.body,
        })),
      );
    }
    report(rows);
  } finally {
    await server.stop();
    if (profile) {
      const files = (await readdir(profileDir)).filter((name) => name.endsWith('.cpuprofile'));
      console.log(`\nCPU profiles: ${files.map((name) => path.join(profileDir, name)).join(', ')}`);
    }
  }
}

async function run(
  scenario: string,
  connections: number,
  server: RunningServer,
  keys: string[],
  request: (i: number) => {
    method: 'GET' | 'POST';
    path: string;
    headers?: Record<string, string>;
    body?: Buffer;
  },
): Promise<Row> {
  let next = 0;
  const statuses: Record<string, number> = {};
  const cpuBefore = mainThreadCpuMs(server.pid);
  const result = await autocannon({
    url: server.origin,
    connections,
    duration,
    requests: [
      {
        setupRequest: (req) => {
          const i = next++;
          const { method, path: requestPath, headers, body } = request(i);
          return {
            ...req,
            method,
            path: requestPath,
            headers: { ...headers, 'x-api-key': keys[i % keys.length]! },
            ...(body ? { body } : {}),
          };
        },
        onResponse: (status) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
        },
      },
    ],
  });
  const cpuMs = mainThreadCpuMs(server.pid) - cpuBefore;
  const ok = Object.entries(statuses)
    .filter(([status]) => Number(status) < 300)
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    scenario,
    connections,
    requests: result.requests.total,
    perSecond: ok / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses,
    errors: result.errors + result.timeouts,
    cpuMsPerRequest: cpuMs / Math.max(1, result.requests.total),
  };
}

/** User and system time of a process's main thread (Linux), in milliseconds. */
function mainThreadCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces: utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
const CLOCK_TICKS = 100;

/** Until every job made for polling has finished, so that their inference is not running while timed. */
async function settled(server: RunningServer, keys: string[], jobIds: string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (const [i, id] of jobIds.entries()) {
    for (;;) {
      const response = await fetch(`${server.baseUrl}/jobs/${id}`, { headers: { 'x-api-key': keys[i]! } });
      const { status } = (await response.json()) as { status: string };
      if (['success', 'failed', 'cancelled'].includes(status) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Keys written straight into the running stack's table, as `keys create` does, without a CLI per key. */
async function createKeys(server: RunningServer, count: number): Promise<string[]> {
  const { openLocalData } = await import('../../local/data.ts');
  await openLocalData(server.dataDir);
  const { deps } = await import('#wiring/api.ts');
  const { createApiKey } = await import('#core/use-cases/create-api-key.ts');
  const keys: string[] = [];
  for (let i = 0; i < count; i++)
    keys.push((await createApiKey(deps(), { credits: 10_000_000, name: `bench-${i}` })).key);
  return keys;
}

/** A small real photo (an eval photo scaled to 320 px wide) when ../shared is there, else a plain one. */
async function smallPhoto(): Promise<Buffer> {
  const source = path.join(SHARED, 'eval', 'plates', 'eu', 'eu1.jpg');
  const input = existsSync(source)
    ? sharp(readFileSync(source))
    : sharp({ create: { width: 320, height: 240, channels: 3, background: '#667788' } });
  return input.resize({ width: 320 }).jpeg({ quality: 80 }).toBuffer();
}

function multipartBody(photo: Buffer): { type: string; body: Buffer } {
  const boundary = 'benchboundary';
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="mode"\r\n\r\nanalyze\r\n`),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="car.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      photo,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  };
}

function report(rows: Row[]) {
  console.log(
    `\napi load on the embedded stack: ${os.cpus().length} CPU ${os.cpus()[0]?.model ?? ''}, ${duration} s a row, ` +
      `${keyCount} keys; targets at 200 connections: polls >= ${TARGETS.poll}/s, creations >= ${TARGETS.create}/s, ` +
      `p99 <= ${TARGETS.p99Ms} ms; load average at the end ${os
        .loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}\n`,
  );
  const table = [
    ['scenario', 'conn', 'ok/s', 'p50 ms', 'p99 ms', 'requests', 'statuses', 'errors', 'cpu ms/req'],
    ...rows.map((row) => [
      row.scenario,
      String(row.connections),
      row.perSecond.toFixed(0),
      String(row.p50),
      String(row.p99),
      String(row.requests),
      Object.entries(row.statuses)
        .map(([status, count]) => `${status}:${count}`)
        .join(' '),
      String(row.errors),
      row.cpuMsPerRequest.toFixed(2),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
}
