/**
 * Peak RSS of the API process (`npm start`: API, storage, workflows in one process) while a 1 GB ZIP
 * archive is accepted: POST /uploads, the PUT of 1 GB to the presigned URL, POST /batches with its
 * `upload_id`, and the unpacking step reading all 1,000 entries by ranges. Target: under 300 MB, which
 * holds only if no part of the path holds the archive. The archive is made at run time in a temporary
 * folder (1,000 entries of 1 MiB, incompressible, stored) and removed afterwards.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { zipStream } from '#aws/zip-archives.ts';

const RSS_TARGET_MB = 300;
const ENTRIES = 1000;
const ENTRY_BYTES = 1024 * 1024;

export async function archiveIntakeBench(repoRoot: string): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'photo-jobs-bench-archive-'));
  let server: ChildProcess | undefined;
  try {
    const archivePath = path.join(dir, 'archive.zip');
    async function* entries() {
      for (let i = 0; i < ENTRIES; i++)
        yield {
          name: `clips/${String(i).padStart(4, '0')}.bin`,
          data: randomBytes(ENTRY_BYTES),
          compress: false,
        };
    }
    await pipeline(zipStream(entries()), createWriteStream(archivePath));
    const bytes = (await stat(archivePath)).size;

    const masterKey = 'pjm_bench_master_key';
    server = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', DATA_DIR: path.join(dir, 'data'), MASTER_KEY: masterKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = server;
    let output = '';
    child.stderr!.on('data', (chunk) => {
      output += chunk;
    });
    const baseUrl = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => {
        output += chunk;
        const match = output.match(/API\s+(http:\/\/\S+)/);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output.slice(-500)}`)));
    });
    const headers = { 'x-api-key': masterKey, 'content-type': 'application/json' };
    // Resident memory sampled during the intake itself: the high-water mark of the process also holds
    // its start (the CDK app synthesized to read the topology), which no archive touches.
    const rssMb = async () =>
      Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const idleMb = await rssMb();
    let peakMb = idleMb;
    const sampler = setInterval(() => {
      rssMb().then(
        (mb) => {
          peakMb = Math.max(peakMb, mb);
        },
        () => undefined,
      );
    }, 50);
    const started = Date.now();
    const opened = (await (
      await fetch(`${baseUrl}/uploads`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ content_type: 'application/zip', filename: 'big.zip', size: bytes }),
      })
    ).json()) as { upload_id: string; url: string; headers: Record<string, string> };
    await new Promise<void>((resolve, reject) => {
      const put = http.request(
        opened.url,
        { method: 'PUT', headers: { ...opened.headers, 'content-length': String(bytes) } },
        (response) => {
          response.resume();
          response.on('end', () =>
            response.statusCode === 200
              ? resolve()
              : reject(new Error(`PUT answered ${response.statusCode}`)),
          );
        },
      );
      put.on('error', reject);
      createReadStream(archivePath).pipe(put);
    });
    peakMb = Math.max(peakMb, await rssMb());
    const afterPutPeakMb = peakMb;
    const created = (await (
      await fetch(`${baseUrl}/batches`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ upload_id: opened.upload_id }),
      })
    ).json()) as { batch: { id: string; status: string } };
    let batch = created.batch;
    while (batch.status === 'unpacking') {
      await new Promise((resolve) => setTimeout(resolve, 500));
      batch = (
        (await (await fetch(`${baseUrl}/batches/${batch.id}`, { headers })).json()) as { batch: typeof batch }
      ).batch;
    }
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    peakMb = Math.max(peakMb, await rssMb());
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const sinceStartMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    return [
      '',
      `Archive intake: a ${(bytes / 1e9).toFixed(2)} GB ZIP (${ENTRIES} entries) through POST /uploads, PUT, ` +
        `POST /batches and unpacking, in ${seconds.toFixed(0)} s; batch ${batch.status}`,
      `peak RSS of the API process during the intake  ${peakMb.toFixed(0)} MB  target < ${RSS_TARGET_MB} MB  ${peakMb < RSS_TARGET_MB ? 'ok' : 'over'}`,
      `  (RSS when idle before it ${idleMb.toFixed(0)} MB; peak by the end of the PUT ${afterPutPeakMb.toFixed(0)} MB; ` +
        `high-water mark since start, CDK synthesis included, ${sinceStartMb.toFixed(0)} MB)`,
    ];
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
}
