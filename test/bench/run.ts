/**
 * `npm run bench [-- --runs N] [-- --only op,op] [-- --ours-only] [-- --largest] [-- --json file]`: our operations and a peer doing the same work, side by side on the same
 * 12 MP photos in one invocation. The peer is `@imgly/background-removal-node@1.4.5` (the same ISNet
 * weights, fp16 "medium"), a dev dependency only: its `removeBackground` stands against our `background`
 * and `studio_background`, its `segmentForeground` against our `background_mask`. Every row runs in its own
 * child process, so its peak RSS is its own (runtime, models, decode and work); ours get the inference
 * function's process environment (lib/config.ts). The child times one cold job (from the process's
 * start: imports, model load, first job) and then `runs` warm jobs, cycling through the photos. The peer
 * loads its model from the files inside its npm package (a `file://` publicPath); its child refuses every
 * fetch and every socket that leaves loopback, and the table says so if one was attempted. `plate` has two
 * more rows: the detector alone, and a 12 MP street of parked cars (`STREET_PHOTO`); `-- stages` times a `plate`
 * job per stage on the photos these make (test/bench/plate-stages.ts). Skips with a
 * message when ../shared/eval is not there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { ModelUnavailableError, ServiceError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import { OPERATION_NAMES, type Operation } from '#core/jobs/operations.ts';
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';
import type { OperationResult } from '#core/ports.ts';
import { ensureIsnetFp32Model } from '#models/isnet.ts';
import { defaultModelSearchDirs } from '#models/locate.ts';
import { carDetector } from '#vision/car-detector.ts';
import { modelCache } from '#vision/models.ts';
import { onnxOperationRunner } from '#vision/operation-runner.ts';
import { hidePlates } from '#vision/operations/hide-plates.ts';
import { createPlateDetector } from '#vision/plate-detector.ts';
import { inference } from '../../lib/config.ts';
import { archiveIntakeBench } from './archive-intake.ts';

const script = fileURLToPath(import.meta.url);
const repoRoot = path.resolve(path.dirname(script), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
/** Front views with their plates in sight (so that `plate` has something to hide), and a side view. */
const SOURCE_PHOTOS = [
  'views/LABELED(front)audi_a4__595804076s.jpg',
  'views/LABELED(front)bmw_3-series__591248033s.jpg',
  'views/LABELED(angle-back-on-left)audi_a6__573410297s.jpg',
];
/**
 * A street of parked cars (issue 34: `plate` on ten cars at 12 MP within 3 s): NanoDet finds 14 vehicles in
 * it at 4000x3000, 9 without its tiles.
 */
const STREET_PHOTO = 'plates/br/AYO9034.jpg';
const BENCH_DIR = path.join(repoRoot, '.cache', 'bench');
/**
 * `--largest`: the photos at the largest size the API accepts (MAX_IMAGE_PIXELS at 4:3), the peak RSS the
 * inference function's memory is sized from (lib/config.ts `inference.memoryMiB`); else 12 MP.
 */
const largest = process.argv.includes('--largest');
const PHOTO_SIZE = largest ? largestAccepted(4, 3) : { width: 4000, height: 3000 };
const sizeName = `${PHOTO_SIZE.width}x${PHOTO_SIZE.height}`;
const benchImage = (i: number) => path.join(BENCH_DIR, `bench-${i}-${sizeName}.jpg`);
const streetImage = path.join(BENCH_DIR, 'bench-street-4000x3000.jpg');

const PEER_PACKAGE = '@imgly/background-removal-node';
const PEER_CALLS = ['removeBackground', 'segmentForeground'] as const;
type PeerCall = (typeof PEER_CALLS)[number];
/** Which of our operations does the work of each peer call. */
const PEER_OF: Partial<Record<Operation, PeerCall>> = {
  background: 'removeBackground',
  studio_background: 'removeBackground',
  background_mask: 'segmentForeground',
};
/** `plate` on the street photo alone: its cost beside the listing photos' `plate` row is the cars'. */
const STREET = 'plate (12 MP street)';
/** Issue 15: each ISNet operation at most this share of the peer's p50 and of its peak RSS. */
const PEER_RATIO_TARGET = 0.6;
/** Seconds at p50 and MB of peak RSS for the operations the peer does not do. */
const ABSOLUTE_TARGETS: Partial<Record<string, { p50: number; rssMb: number }>> = {
  plate: { p50: 0.35, rssMb: 500 },
  analyze: { p50: 0.35, rssMb: 500 },
  [STREET]: { p50: 3, rssMb: 500 },
};

const params: JobParams = {
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

interface ChildReport {
  row: string;
  status: 'ok' | 'absent' | 'failed';
  message?: string;
  /** From the process's start to the end of its first job. */
  coldMs?: number;
  runsMs?: number[];
  peakRssMb: number;
  /** Ours: bytes of each warm run's photo, of every file it wrote, and of the file behind `url`. */
  bytes?: Array<{ source: number; files: number; url: number }>;
  /** Outbound attempts refused in the child (peer only). */
  outbound?: string[];
}

/** The largest width x height of this aspect within MAX_IMAGE_PIXELS. */
function largestAccepted(across: number, down: number) {
  const unit = Math.floor(Math.sqrt(MAX_IMAGE_PIXELS / (across * down)));
  let width = unit * across;
  let height = unit * down;
  while ((width + 1) * height <= MAX_IMAGE_PIXELS) width++;
  while (width * (height + 1) <= MAX_IMAGE_PIXELS) height++;
  return { width, height };
}

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const runs = Math.max(1, Number(arg('--runs') ?? process.env.BENCH_RUNS ?? 6));
/** `--only background,background_mask`: those of our rows (and the peer rows they are compared with). */
const only = arg('--only')?.split(',') as Operation[] | undefined;
/** `--ours-only`: our rows alone, without the peer and the archive intake (the cost model's figures). */
const oursOnly = process.argv.includes('--ours-only');
/** `--json <file>`: our rows' figures also written there, for `npm run cost` (tools/cost/bench.json). */
const jsonOut = arg('--json');
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;

async function photos(): Promise<Buffer[]> {
  return Promise.all(SOURCE_PHOTOS.map((_, i) => readFile(benchImage(i))));
}

/** Times the first job from the process's start, then `runs` more; `runs` holds each warm job's answer. */
async function timeJobs<T>(job: (photo: Buffer) => Promise<T>, sources: Buffer[]) {
  await job(sources[0]!);
  const coldMs = performance.now();
  const runsMs: number[] = [];
  const answers: Array<{ source: Buffer; answer: T }> = [];
  for (let i = 0; i < runs; i++) {
    const source = sources[(i + 1) % sources.length]!;
    const started = performance.now();
    answers.push({ source, answer: await job(source) });
    runsMs.push(performance.now() - started);
  }
  return { coldMs, runsMs, answers };
}

/**
 * `plate` with the detector alone (its pyramid and NanoDet's cars, no text read or searched): beside the
 * `plate` row, the difference is what the text signal costs.
 */
const DETECTOR_ONLY = 'plate (detector only)';

async function detectorOnly(): Promise<ChildReport> {
  const sources = await photos();
  const models = modelCache({});
  const detector = await models.get('bench-detector-only', 'lpd-yunet', async (file) =>
    createPlateDetector(file, { intraOpNumThreads: models.threads, carDetector: await carDetector(models) }),
  );
  const { coldMs, runsMs } = await timeJobs((source) => hidePlates({ detector }, source, params), sources);
  return { row: DETECTOR_ONLY, status: 'ok', coldMs, runsMs, peakRssMb: peakRssMb() };
}

/** One of our operations, in this process, through the same runner as the workers. */
async function ours(row: Operation | typeof STREET): Promise<ChildReport> {
  if ((row as string) === DETECTOR_ONLY) return detectorOnly();
  const operation = row === STREET ? 'plate' : row;
  const sources = row === STREET ? [await readFile(streetImage)] : await photos();
  const runner = onnxOperationRunner();
  try {
    const { coldMs, runsMs, answers } = await timeJobs(
      (source) => runner.run(operation, { source, sourceSha256: 'bench', params, background: null }),
      sources,
    );
    const sum = (files: OperationResult['files']) =>
      files.reduce((total, file) => total + file.bytes.length, 0);
    const bytes = answers.map(({ source, answer }) => ({
      source: source.length,
      files: sum(answer.files),
      url: sum(answer.files.filter((file) => file.roles.includes('url'))),
    }));
    return { row, status: 'ok', coldMs, runsMs, bytes, peakRssMb: peakRssMb() };
  } catch (error) {
    const absent = error instanceof ModelUnavailableError && /no model installed/.test(error.message);
    return {
      row,
      status: absent ? 'absent' : 'failed',
      message: error instanceof ServiceError ? `${error.name}: ${error.message}` : String(error),
      peakRssMb: peakRssMb(),
    };
  }
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.|localhost$)/;

/** Refuses (and records) every fetch and every socket to a host other than loopback, in this process. */
function guardOutbound(): string[] {
  const attempts: string[] = [];
  globalThis.fetch = ((input: unknown) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.startsWith('file:')) attempts.push(`fetch ${url}`);
    return Promise.reject(new Error(`bench: fetch of ${url} refused`));
  }) as typeof fetch;
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = args[0] as { host?: string; path?: string } | number | string;
    const host =
      typeof first === 'object' && first !== null
        ? (first.path ?? first.host ?? 'localhost')
        : typeof first === 'number'
          ? String(args[1] ?? 'localhost')
          : String(first);
    if (!host.startsWith('/') && !LOOPBACK.test(host)) {
      attempts.push(`connect ${host}`);
      throw new Error(`bench: connection to ${host} refused`);
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
  return attempts;
}

/** The peer in this process, its model read from its own package's dist/ (never its CDN). */
async function peer(call: PeerCall): Promise<ChildReport> {
  const outbound = guardOutbound();
  const row = `peer ${call}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(PEER_PACKAGE);
  } catch {
    return {
      row,
      status: 'absent',
      message: `${PEER_PACKAGE} is not installed (npm ci installs it as a dev dependency)`,
      peakRssMb: peakRssMb(),
    };
  }
  try {
    const lib = (await import(pathToFileURL(entry.replace(/index\.cjs$/, 'index.mjs')).href)) as Record<
      PeerCall,
      (image: unknown, config: unknown) => Promise<Blob>
    >;
    const config = {
      publicPath: `${pathToFileURL(path.dirname(entry)).href}/`,
      model: 'medium',
      // A cut-out needs alpha, so the peer's result is a PNG; ours is a JPEG plus the matte as a PNG.
      output: { format: 'image/png', quality: 0.92 },
    };
    const sources = await photos();
    const { coldMs, runsMs } = await timeJobs(async (source) => {
      const blob = await lib[call](new Blob([source], { type: 'image/jpeg' }), config);
      await blob.arrayBuffer();
    }, sources);
    return { row, status: 'ok', coldMs, runsMs, peakRssMb: peakRssMb(), outbound };
  } catch (error) {
    return { row, status: 'failed', message: String(error), peakRssMb: peakRssMb(), outbound };
  }
}

const quantile = (sorted: number[], q: number) => {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
};

function spawnChild(kind: '--child' | '--peer', name: string): ChildReport {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', script, kind, name, '--runs', String(runs), ...(largest ? ['--largest'] : [])],
    {
      cwd: repoRoot,
      // Our rows run as the inference function does (its glibc settings); the peer as it comes.
      env: kind === '--child' ? { ...process.env, ...inference.processEnvironment } : process.env,
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const line = result.stdout.split('\n').find((l) => l.startsWith('{"row"'));
  if (line) return JSON.parse(line) as ChildReport;
  return {
    row: kind === '--peer' ? `peer ${name}` : name,
    status: 'failed',
    message: (result.stderr || `exit ${result.status}`).trim().split('\n').slice(-3).join(' '),
    peakRssMb: 0,
  };
}

interface Figures {
  p50: number;
  p95: number;
  cold: number;
  rss: number;
}
const figures = (r: ChildReport): Figures | null => {
  if (r.status !== 'ok') return null;
  const sorted = [...r.runsMs!].sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5) / 1000,
    p95: quantile(sorted, 0.95) / 1000,
    cold: r.coldMs! / 1000,
    rss: r.peakRssMb,
  };
};

function printTable(cells: string[][]) {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  for (const r of cells) console.log(`| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`);
}

/**
 * Physical cores, threads per core and the widest x86 vector unit, from /proc/cpuinfo. onnxruntime sizes its
 * thread pools by physical cores, and the peer's parallel execution mode turns its memory pattern off only
 * with more than one (docs/quality.md, Speed and memory: the peer's RSS halves there); kernels depend on the vector
 * unit. Tables from hosts that differ here do not compare.
 */
function cpuTopology(): string {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (name: string) => info.match(new RegExp(`^${name}\\s*:(.*)$`, 'm'))?.[1]?.trim();
    const cores = Number(field('cpu cores'));
    const siblings = Number(field('siblings'));
    const flags = field('flags')?.split(' ') ?? [];
    const vector = flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') ? 'AVX2' : 'no AVX2';
    if (!cores || !siblings) return vector;
    return `${cores} physical cores, ${siblings / cores} thread(s) each, ${vector}`;
  } catch {
    return 'topology unknown';
  }
}

async function main() {
  // The file holds one run of every operation, each photo counted alike.
  if (jsonOut && (only || largest || runs % SOURCE_PHOTOS.length !== 0)) {
    console.error(
      `--json takes every operation at 12 MP (no --only, no --largest) and --runs a multiple of ${SOURCE_PHOTOS.length}`,
    );
    process.exitCode = 2;
    return;
  }
  if (!existsSync(path.join(evalDir, SOURCE_PHOTOS[0]!))) {
    console.log(`No eval photos under ${evalDir} (see ../shared/eval/README.md): no benchmark.`);
    return;
  }
  await mkdir(BENCH_DIR, { recursive: true });
  let bytes = 0;
  for (const [i, photo] of SOURCE_PHOTOS.entries()) {
    const big = await sharp(await readFile(path.join(evalDir, photo)))
      .resize(PHOTO_SIZE.width, PHOTO_SIZE.height, { fit: 'cover', kernel: 'lanczos3' })
      .jpeg({ quality: 90 })
      .toBuffer();
    bytes += big.length;
    await writeFile(benchImage(i), big);
  }
  const street = await sharp(await readFile(path.join(evalDir, STREET_PHOTO)))
    .resize(4000, 3000, { fit: 'cover', kernel: 'lanczos3' })
    .jpeg({ quality: 90 })
    .toBuffer();
  await writeFile(streetImage, street);
  // As `npm start` and the inference image's build do before serving: the cold rows time a process whose
  // model files are installed, and the one-off derivation is reported here instead.
  const deriving = performance.now();
  const fp32 = await ensureIsnetFp32Model(defaultModelSearchDirs(repoRoot)).catch(() => null);
  const derivedMs = performance.now() - deriving;
  console.log(
    fp32
      ? `ISNet float32 file ${fp32}: ready in ${(derivedMs / 1000).toFixed(1)} s (derived once per install when missing)`
      : 'ISNet float32 file: not available (the ISNet rows will say why)',
  );
  const loadBefore = os.loadavg()[0]!;
  console.log(
    `Benchmark: ${SOURCE_PHOTOS.length} eval photos upscaled to ${sizeName} JPEG (${(bytes / 1e6).toFixed(1)} MB ` +
      `in all), one cold job then ${runs} warm jobs per row, one child process per row; ` +
      `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}, ${cpuTopology()}), load average ${loadBefore.toFixed(1)}`,
  );
  const operations = OPERATION_NAMES.filter((operation) => !only || only.includes(operation));
  const peers = new Map<PeerCall, ChildReport>();
  for (const call of PEER_CALLS) {
    if (!oursOnly && operations.some((operation) => PEER_OF[operation] === call))
      peers.set(call, spawnChild('--peer', call));
  }
  const rows: string[] = operations.flatMap((operation) =>
    operation === 'plate' ? [operation, DETECTOR_ONLY, STREET] : [operation],
  );
  const reports = rows.map((row) => spawnChild('--child', row));

  const header = [
    'row',
    'p50 s',
    'p95 s',
    'cold s',
    'peak RSS MB',
    'peer p50 / RSS',
    'ratio time',
    'ratio RSS',
    'verdict',
  ];
  const cells: string[][] = [header];
  const fmt = (f: Figures | null, key: keyof Figures, digits: number) => (f ? f[key].toFixed(digits) : '-');
  /** p50, p95 and cold start in seconds, peak RSS in MB: the first columns of every row. */
  const timings = (f: Figures | null) => [
    fmt(f, 'p50', 2),
    fmt(f, 'p95', 2),
    fmt(f, 'cold', 2),
    fmt(f, 'rss', 0),
  ];
  for (const r of reports) {
    const f = figures(r);
    const peerCall = PEER_OF[r.row as Operation];
    const p = peerCall ? peers.get(peerCall)! : null;
    const pf = p ? figures(p) : null;
    let ratioTime = '-';
    let ratioRss = '-';
    let verdict: string;
    if (!f) verdict = r.status === 'absent' ? 'not in this build' : `failed: ${r.message}`;
    else if (p && pf) {
      const rt = f.p50 / pf.p50;
      const rr = f.rss / pf.rss;
      ratioTime = rt.toFixed(2);
      ratioRss = rr.toFixed(2);
      verdict =
        rt <= PEER_RATIO_TARGET && rr <= PEER_RATIO_TARGET
          ? 'ok'
          : `over (target <= ${PEER_RATIO_TARGET} each)`;
    } else if (p) verdict = `peer ${p.status}: ${p.message}`;
    else {
      const t = ABSOLUTE_TARGETS[r.row];
      verdict = !t
        ? r.row === DETECTOR_ONLY
          ? 'the text signal costs the difference to the plate row'
          : ''
        : f.p50 <= t.p50 && f.rss <= t.rssMb
          ? 'ok'
          : `over (<= ${t.p50} s, <= ${t.rssMb} MB)`;
    }
    cells.push([
      r.row,
      ...timings(f),
      p
        ? pf
          ? `${peerCall} ${pf.p50.toFixed(2)} s / ${pf.rss.toFixed(0)} MB`
          : `${peerCall}: ${p.status}`
        : '',
      ratioTime,
      ratioRss,
      verdict,
    ]);
  }
  for (const p of peers.values()) {
    const f = figures(p);
    cells.push([p.row, ...timings(f), '', '', '', f ? 'peer' : `peer ${p.status}: ${p.message}`]);
  }
  printTable(cells);
  const outbound = [...peers.values()].flatMap((p) => p.outbound ?? []);
  console.log(
    outbound.length === 0
      ? 'Peer network: no outbound connection or fetch was attempted (its model came from its package dist/).'
      : `Peer network: REFUSED outbound attempts: ${outbound.join(', ')}`,
  );
  const loadAfter = os.loadavg()[0]!;
  console.log(`Load average after: ${loadAfter.toFixed(1)} (before: ${loadBefore.toFixed(1)})`);
  if (jsonOut) await writeBenchJson(jsonOut, reports, { before: loadBefore, after: loadAfter });
  if (!oursOnly) for (const line of await archiveIntakeBench(repoRoot)) console.log(line);
}

/** A machine this busy before the run (load average per CPU) times other work as much as ours. */
const QUIET_LOAD_PER_CPU = 1;

/**
 * Our rows' figures as tools/cost/ reads them: the mean bytes of each run's photo and files, always; the p50
 * only from a quiet machine, else the run times already in the file stay, with their date and load.
 */
async function writeBenchJson(file: string, reports: ChildReport[], load: { before: number; after: number }) {
  const mean = (values: number[]) => Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  const ours = reports.filter(
    (report) =>
      figures(report) && report.bytes && (OPERATION_NAMES as readonly string[]).includes(report.row),
  );
  const stamp = {
    measured: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`,
    host: `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}, ${cpuTopology()})`,
    loadAverage: { before: Number(load.before.toFixed(1)), after: Number(load.after.toFixed(1)) },
  };
  const sizes = {
    ...stamp,
    operations: Object.fromEntries(
      ours.map((report) => [
        report.row,
        {
          sourceBytes: mean(report.bytes!.map((b) => b.source)),
          filesBytes: mean(report.bytes!.map((b) => b.files)),
          urlBytes: mean(report.bytes!.map((b) => b.url)),
        },
      ]),
    ),
  };
  const quiet = load.before <= QUIET_LOAD_PER_CPU * os.cpus().length;
  const kept = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).durations : undefined;
  const durations = quiet
    ? {
        ...stamp,
        operations: Object.fromEntries(
          ours.map((report) => [report.row, { p50Ms: Math.round(figures(report)!.p50 * 1000) }]),
        ),
      }
    : kept;
  await writeFile(file, `${JSON.stringify({ sizes, durations }, null, 2)}\n`);
  console.log(
    quiet
      ? `Figures written to ${file}`
      : `Sizes written to ${file}; the run times there stay (${kept?.measured ?? 'none yet'}): load average ` +
          `${load.before.toFixed(1)} is over ${QUIET_LOAD_PER_CPU} per CPU`,
  );
}

const childOperation = arg('--child') as Operation | undefined;
if (process.argv[2] === 'api') {
  // `npm run bench -- api`: the HTTP load benchmark of the embedded stack (test/bench/api.ts).
  await (await import('./api.ts')).benchApi();
} else if (process.argv[2] === 'coldstart') {
  // `npm run bench -- coldstart [--runs N]`: import CPU time of each bundle (test/bench/coldstart.ts).
  const { benchColdStart } = await import('./coldstart.ts');
  for (const line of await benchColdStart(repoRoot, Math.max(1, Number(arg('--runs') ?? 9))))
    console.log(line);
} else if (process.argv[2] === 'stages') {
  // `npm run bench -- stages [--runs N]`: a `plate` job's time per stage on the bench's photos.
  const { plateStages } = await import('./plate-stages.ts');
  const made = [...SOURCE_PHOTOS.map((_, i) => benchImage(i)), streetImage].filter((file) =>
    existsSync(file),
  );
  if (made.length === 0)
    console.log('No bench photos under .cache/bench: run `npm run bench -- --only plate` first.');
  for (const line of await plateStages(made, Math.max(1, Number(arg('--runs') ?? 3)))) console.log(line);
} else if (process.argv[2] === 'archive') {
  // `npm run bench -- archive`: peak RSS of the API process while a 1 GB archive is accepted.
  for (const line of await archiveIntakeBench(repoRoot)) console.log(line);
} else if (childOperation) {
  console.log(JSON.stringify(await ours(childOperation)));
} else if (arg('--peer')) {
  console.log(JSON.stringify(await peer(arg('--peer') as PeerCall)));
} else {
  await main();
}
