/**
 * `npm run bench -- coldstart [--runs N]`: the CPU time of importing each API function's bundle, beside a
 * minimal handler's (minimal-handler.ts), and the inference function's. Issue 37: each API bundle at most
 * 1.2x the minimal one; the inference function's import under 1.5 s.
 *
 * The API bundles are the ones `cdk deploy` uploads (the bundled assembly of test/support/assembly.ts), run
 * with the environment their template gives them (NODE_OPTIONS included); the minimal handler is bundled by
 * the same construct (lib/constructs/handler-function.ts) with that environment; the inference bundle is
 * built as its image builds it (functions/inference/bundle.ts). Each import runs in a fresh Node process
 * that reports the process's CPU time (user + system) around `import()`; the runs are interleaved (every
 * bundle once, in turn, N times) so that a busy moment of the machine falls on all of them alike. The
 * ratio of the fastest runs is printed beside the medians': on shared cores a median can move by 0.1-0.2.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Duration, Stack } from 'aws-cdk-lib';
import { bundleInference } from '../../functions/inference/bundle.ts';
import { createApp } from '../../lib/app.ts';
import { handlerMetadataKey, inference, noRouteFunction, pageHandler, routes } from '../../lib/config.ts';
import { constructIdOf, createHandlerFunction } from '../../lib/constructs/handler-function.ts';
import { bundledAssembly } from '../support/assembly.ts';

const MINIMAL = 'test/bench/minimal-handler.ts';
/** Issue 37, item 3. */
const API_RATIO_TARGET = 1.2;
const INFERENCE_TARGET_MS = 1500;

/** Prints the CPU milliseconds of importing the file named by its argument, as one JSON line. */
const CHILD = `
const before = process.cpuUsage();
const started = performance.now();
await import(process.argv[1]);
const used = process.cpuUsage(before);
console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }));
`;

interface Bundle {
  name: string;
  file: string;
  environment: Record<string, string>;
}

type Resource = {
  Type: string;
  Metadata?: Record<string, unknown>;
  Properties: { Code?: { S3Key?: string }; Environment?: { Variables?: Record<string, unknown> } };
};

/** The string variables of a function (references to resources resolve only in AWS; nothing reads them at import). */
const plainVariables = (resource: Resource): Record<string, string> =>
  Object.fromEntries(
    Object.entries(resource.Properties.Environment?.Variables ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );

/** The API functions' bundles and environments, from the assembly `cdk deploy` would upload. */
async function apiBundles(): Promise<Bundle[]> {
  const { dir, templates } = await bundledAssembly();
  const handlers = new Set([...routes.map((route) => route.handler), pageHandler, noRouteFunction.handler]);
  const bundles: Bundle[] = [];
  for (const resource of Object.values(templates.service.Resources) as Resource[]) {
    const handler = resource.Metadata?.[handlerMetadataKey] as string | undefined;
    if (resource.Type !== 'AWS::Lambda::Function' || !handler || !handlers.has(handler)) continue;
    const hash = resource.Properties.Code?.S3Key?.replace(/\.zip$/, '');
    bundles.push({
      name: handler.split('/').at(-2)!,
      file: path.join(dir, `asset.${hash}`, 'index.mjs'),
      environment: plainVariables(resource),
    });
  }
  return bundles.sort((a, b) => a.name.localeCompare(b.name));
}

/** The minimal handler, bundled by the construct every zip function is made with, in `environment`. */
function minimalBundle(outdir: string, environment: Record<string, string>): Bundle {
  const app = createApp({ bundle: true, validate: false, outdir });
  const stack = new Stack(app, 'ColdStartBench');
  createHandlerFunction(stack, constructIdOf(MINIMAL), {
    handler: MINIMAL,
    environment,
    memorySize: 512,
    timeout: Duration.seconds(29),
    tracing: 'off',
  });
  app.synth();
  const asset = readdirSync(outdir).find((entry) => entry.startsWith('asset.'));
  if (!asset) throw new Error(`no bundle of ${MINIMAL} in ${outdir}`);
  return { name: 'minimal handler', file: path.join(outdir, asset, 'index.mjs'), environment };
}

function importCpuMs(bundle: Bundle): number {
  const result = spawnSync(
    process.execPath,
    ['--input-type=module', '--eval', CHILD, pathToFileURL(bundle.file).href],
    {
      // Only what Lambda would set: no tsx loader, nothing inherited from this process.
      env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', ...bundle.environment },
      encoding: 'utf8',
    },
  );
  const line = result.stdout.split('\n').find((l) => l.startsWith('{"cpuMs"'));
  if (!line) throw new Error(`${bundle.name}: ${result.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return (JSON.parse(line) as { cpuMs: number }).cpuMs;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function benchColdStart(repoRoot: string, runs: number): Promise<string[]> {
  // Under the repository, so that the inference bundle finds its native externals in node_modules.
  const work = path.join(repoRoot, '.cache', 'bench-coldstart');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const api = await apiBundles();
    const minimal = minimalBundle(path.join(work, 'minimal'), api[0]?.environment ?? {});
    const inferenceBundle: Bundle = {
      name: 'inference function',
      file: await bundleInference(path.join(work, 'inference.mjs')),
      environment: { ...inference.processEnvironment },
    };
    const all = [minimal, ...api, inferenceBundle];
    const times = new Map<Bundle, number[]>(all.map((bundle) => [bundle, []]));
    for (let run = 0; run < runs; run++)
      for (const bundle of all) times.get(bundle)!.push(importCpuMs(bundle));

    const base = median(times.get(minimal)!);
    // The fastest runs, the least disturbed by the machine's other work: a second view of the same ratio.
    const fastestBase = Math.min(...times.get(minimal)!);
    const lines = [
      `Import CPU time (user + system), median of ${runs} interleaved runs in fresh processes; ` +
        `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os.loadavg()[0]!.toFixed(1)}; ` +
        `NODE_OPTIONS of the API functions: ${minimal.environment.NODE_OPTIONS ?? '(none)'}`,
    ];
    const rows = [['bundle', 'median ms', 'min ms', 'x minimal', 'x minimal (min)', 'verdict']];
    for (const bundle of all) {
      const ms = times.get(bundle)!;
      const m = median(ms);
      const isApi = bundle !== minimal && bundle !== inferenceBundle;
      rows.push([
        bundle.name,
        m.toFixed(0),
        Math.min(...ms).toFixed(0),
        bundle === inferenceBundle ? '-' : (m / base).toFixed(2),
        bundle === inferenceBundle ? '-' : (Math.min(...ms) / fastestBase).toFixed(2),
        isApi
          ? m / base <= API_RATIO_TARGET
            ? 'ok'
            : `over (target <= ${API_RATIO_TARGET})`
          : bundle === inferenceBundle
            ? m <= INFERENCE_TARGET_MS
              ? 'ok'
              : `over (target <= ${INFERENCE_TARGET_MS} ms)`
            : 'yardstick',
      ]);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) lines.push(`| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`);
    return lines;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
