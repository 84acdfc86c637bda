/**
 * `npm run bench [-- --runs N]`: latency (p50/p95 over N runs after one warm-up that loads the models) and
 * peak RSS of every operation in this build, on a 12 MP JPEG made at run time by upscaling a real eval
 * photo to 4000x3000. Each operation runs in its own child process, in-process through
 * `onnxOperationRunner().run`, so its peak RSS is its own (models, decode and work included).
 * Skips with a message when ../shared/eval is not there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { ModelUnavailableError, ServiceError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import { OPERATIONS, type Operation } from '#core/jobs/job.ts';
import { onnxOperationRunner } from '#vision/operation-runner.ts';
import { archiveIntakeBench } from './archive-intake.ts';

const script = fileURLToPath(import.meta.url);
const repoRoot = path.resolve(path.dirname(script), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
/** A front view with its plate in sight, so that `plate` has something to hide. */
const SOURCE_PHOTO = 'views/LABELED(front)audi_a4__595804076s.jpg';
const BENCH_IMAGE = path.join(repoRoot, '.cache', 'bench', 'bench-4000x3000.jpg');

/** Seconds at p50; the plate and background targets also stand for their mask and studio variants. */
const TARGETS: Record<Operation, number> = {
  plate: 0.6,
  plate_mask: 0.6,
  background: 3,
  studio_background: 3,
  background_mask: 3,
  analyze: 0.4,
};
const RSS_TARGET_MB = 1536;

const params: JobParams = {
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

interface ChildReport {
  operation: Operation;
  status: 'ok' | 'absent' | 'failed';
  message?: string;
  loadMs?: number;
  runsMs?: number[];
  peakRssMb: number;
}

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const runs = Math.max(1, Number(arg('--runs') ?? process.env.BENCH_RUNS ?? 10));

/** One operation, in this process: a warm-up (model load), then `runs` timed runs. */
async function child(operation: Operation): Promise<ChildReport> {
  const source = await readFile(BENCH_IMAGE);
  const runner = onnxOperationRunner();
  const input = { source, sourceSha256: 'bench', params, background: null };
  const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
  const time = async () => {
    const started = performance.now();
    await runner.run(operation, input);
    return performance.now() - started;
  };
  let loadMs: number;
  try {
    loadMs = await time();
  } catch (error) {
    const absent = error instanceof ModelUnavailableError && /no model installed/.test(error.message);
    return {
      operation,
      status: absent ? 'absent' : 'failed',
      message: error instanceof ServiceError ? `${error.name}: ${error.message}` : String(error),
      peakRssMb: peakRssMb(),
    };
  }
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) runsMs.push(await time());
  return { operation, status: 'ok', loadMs, runsMs, peakRssMb: peakRssMb() };
}

const quantile = (sorted: number[], q: number) => {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
};

async function main() {
  if (!existsSync(path.join(evalDir, SOURCE_PHOTO))) {
    console.log(
      `No eval photo at ${path.join(evalDir, SOURCE_PHOTO)} (see ../shared/eval/README.md): no benchmark.`,
    );
    return;
  }
  const big = await sharp(await readFile(path.join(evalDir, SOURCE_PHOTO)))
    .resize(4000, 3000, { fit: 'cover', kernel: 'lanczos3' })
    .jpeg({ quality: 90 })
    .toBuffer();
  await mkdir(path.dirname(BENCH_IMAGE), { recursive: true });
  await writeFile(BENCH_IMAGE, big);
  console.log(
    `Benchmark: ${SOURCE_PHOTO} upscaled to 4000x3000 JPEG (${(big.length / 1e6).toFixed(1)} MB), ${runs} runs ` +
      `after one warm-up per operation, one child process per operation; ${os.cpus().length} CPUs ` +
      `(${os.cpus()[0]?.model ?? 'unknown'}), load average ${os.loadavg()[0]!.toFixed(1)}`,
  );
  const reports: ChildReport[] = [];
  for (const operation of OPERATIONS) {
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', script, '--child', operation, '--runs', String(runs)],
      { cwd: repoRoot, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    const line = result.stdout.split('\n').find((l) => l.startsWith('{"operation"'));
    if (!line) {
      reports.push({
        operation,
        status: 'failed',
        message: (result.stderr || `exit ${result.status}`).trim().split('\n').slice(-3).join(' '),
        peakRssMb: 0,
      });
      continue;
    }
    reports.push(JSON.parse(line) as ChildReport);
  }
  const header = [
    'operation',
    'p50 s',
    'p95 s',
    'target p50',
    'first run s',
    'peak RSS MB',
    'target RSS',
    'verdict',
  ];
  const rows = reports.map((r) => {
    if (r.status !== 'ok')
      return [
        r.operation,
        '-',
        '-',
        `<= ${TARGETS[r.operation]}`,
        '-',
        '-',
        '-',
        r.status === 'absent' ? 'not in this build' : `failed: ${r.message}`,
      ];
    const sorted = [...r.runsMs!].sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5) / 1000;
    const p95 = quantile(sorted, 0.95) / 1000;
    const ok = p50 <= TARGETS[r.operation] && r.peakRssMb <= RSS_TARGET_MB;
    return [
      r.operation,
      p50.toFixed(3),
      p95.toFixed(3),
      `<= ${TARGETS[r.operation]}`,
      (r.loadMs! / 1000).toFixed(2),
      r.peakRssMb.toFixed(0),
      `<= ${RSS_TARGET_MB}`,
      ok ? 'ok' : 'over',
    ];
  });
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const last = header.length - 1;
  for (const r of cells) {
    console.log(
      r.map((c, i) => (i === last ? c : i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
    );
  }
  for (const line of await archiveIntakeBench(repoRoot)) console.log(line);
}

const childOperation = arg('--child') as Operation | undefined;
if (process.argv[2] === 'api') {
  // `npm run bench -- api`: the HTTP load benchmark of the embedded stack (test/bench/api.ts).
  await (await import('./api.ts')).benchApi();
} else if (process.argv[2] === 'archive') {
  // `npm run bench -- archive`: peak RSS of the API process while a 1 GB archive is accepted.
  for (const line of await archiveIntakeBench(repoRoot)) console.log(line);
} else if (childOperation) {
  console.log(JSON.stringify(await child(childOperation)));
} else {
  await main();
}
