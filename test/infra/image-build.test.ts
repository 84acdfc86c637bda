import { execFile, execFileSync } from 'node:child_process';
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_MODELS } from '#models/fetch.ts';
import { createApp, synthesizeTemplates } from '../../lib/app.ts';
import { inference, repoRoot, stackNames } from '../../lib/config.ts';
import { PhotoJobs, type PhotoJobsProps } from '../../lib/index.ts';
import { MODELS } from '../../models/manifest.ts';
import { type Dockerfile, parseCopy, parseDockerfile, parseEnv, type Stage } from './support/dockerfile.ts';

/**
 * The inference image's build rehearsed without Docker: the build context exactly as `cdk deploy` sends it
 * (the `asset.<hash>` folder CDK stages in the cloud assembly, its exclude list applied), the build stage's
 * COPY steps into a scratch root, then its RUN steps there: the esbuild bundle, and the model fetch from a
 * loopback mirror of ../shared/models. Only `npm ci` is replaced (it needs the registry): the project's
 * node_modules is linked instead. A file the image needs and the context lacks fails the bundle or the fetch.
 */
const SHARED_MODELS = path.resolve(repoRoot, '..', 'shared', 'models');
const hasSharedModels = existsSync(SHARED_MODELS);

interface DockerImageAssetSource {
  directory: string;
  dockerFile?: string;
  dockerBuildArgs?: Record<string, string>;
  platform?: string;
}

let scratch = '';
let context = '';
let source: DockerImageAssetSource;
let dockerfile: Dockerfile;
let mirror: Server | undefined;
let mirrorUrl = '';
const served: string[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-image-'));
  const outdir = path.join(scratch, 'cdk.out');
  synthesizeTemplates({ outdir, stageAssets: true });
  const manifest = JSON.parse(
    readFileSync(path.join(outdir, `${stackNames.service}.assets.json`), 'utf8'),
  ) as { dockerImages: Record<string, { source: DockerImageAssetSource }> };
  const images = Object.values(manifest.dockerImages);
  expect(images).toHaveLength(1);
  source = images[0]!.source;
  context = path.join(outdir, source.directory);
  dockerfile = parseDockerfile(readFileSync(path.join(context, source.dockerFile ?? 'Dockerfile'), 'utf8'));

  if (hasSharedModels) {
    mirror = createServer((request, response) => {
      const name = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname.slice(1));
      const file = path.join(SHARED_MODELS, path.basename(name));
      served.push(name);
      if (name.includes('/') || !existsSync(file)) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-length': statSync(file).size });
      createReadStream(file).pipe(response);
    });
    await new Promise<void>((resolve) => mirror!.listen(0, '127.0.0.1', resolve));
    mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
  }
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (mirror ? mirror.close(() => resolve()) : resolve()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** `${NAME}` and `$NAME` of the stage's ARG/ENV values, as Docker substitutes them in COPY and WORKDIR. */
const substitute = (text: string, vars: Map<string, string>) =>
  text.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (_, a: string | undefined, b: string | undefined) => vars.get(a ?? b!) ?? '',
  );

/**
 * Runs one stage's COPY and RUN steps in `root` (the image's `/`). Absolute image paths in RUN commands
 * whose first segment the stage owns (its WORKDIRs, what later stages copy out of it) are moved under `root`.
 */
async function rehearse(
  stage: Stage,
  root: string,
  buildArgs: Record<string, string>,
  skip: (run: string) => boolean,
) {
  const vars = new Map<string, string>();
  let workdir = '/';
  const ownedRoots = new Set<string>();
  for (const later of dockerfile.stages)
    for (const instruction of later.instructions)
      if (instruction.keyword === 'COPY') {
        const copy = parseCopy(instruction.args);
        if (copy.from === stage.name) for (const src of copy.sources) ownedRoots.add(src.split('/')[1]!);
      }
  for (const instruction of stage.instructions)
    if (instruction.keyword === 'WORKDIR') ownedRoots.add(instruction.args.split('/')[1]!);
  const inRoot = (imagePath: string) => path.join(root, path.posix.resolve(workdir, imagePath));
  const rewrite = (command: string) =>
    command.replace(/(^|[\s="'])\/([\w.-]+)/g, (match, before: string, first: string) =>
      ownedRoots.has(first) ? `${before}${root}/${first}` : match,
    );
  const steps: string[] = [];

  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') {
      workdir = path.posix.resolve(workdir, substitute(args, vars));
      execFileSync('mkdir', ['-p', inRoot('.')]);
    } else if (keyword === 'ARG') {
      const [name = '', fallback = ''] = args.split(/=(.*)/s);
      vars.set(name, buildArgs[name] ?? fallback);
    } else if (keyword === 'ENV') {
      for (const [name, value] of parseEnv(args)) vars.set(name, substitute(value, vars));
    } else if (keyword === 'COPY') {
      const copy = parseCopy(substitute(args, vars));
      if (copy.from !== undefined) continue;
      const destination = inRoot(copy.destination);
      for (const src of copy.sources) {
        const from = path.join(context, src);
        // As Docker: a source missing from the context fails the build.
        expect(existsSync(from), `COPY ${src}: not in the build context ${source.directory}`).toBe(true);
        if (lstatSync(from).isDirectory()) {
          execFileSync('mkdir', ['-p', destination]);
          execFileSync('cp', ['-R', `${from}/.`, destination]);
        } else {
          const intoDir = copy.destination.endsWith('/') || copy.sources.length > 1;
          const target = intoDir ? path.join(destination, path.basename(src)) : destination;
          execFileSync('mkdir', ['-p', path.dirname(target)]);
          execFileSync('cp', [from, target]);
        }
      }
      steps.push(`COPY ${copy.sources.join(' ')}`);
    } else if (keyword === 'RUN') {
      if (/^npm ci\b/.test(args)) {
        // The registry is out of reach: the project's own install stands in for `npm ci`.
        execFileSync('ln', ['-s', path.join(repoRoot, 'node_modules'), inRoot('node_modules')]);
        steps.push('npm ci (linked)');
        continue;
      }
      if (skip(args)) {
        steps.push(`skipped: ${args}`);
        continue;
      }
      const env = { ...process.env, ...Object.fromEntries(vars) };
      try {
        // Asynchronous: the mirror answers from this process.
        await promisify(execFile)('sh', ['-c', rewrite(args)], { cwd: inRoot('.'), env, maxBuffer: 1 << 24 });
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        throw new Error(`RUN ${args}\nfailed:\n${stderr ?? ''}${stdout ?? ''}`);
      }
      steps.push(`RUN ${args}`);
    }
  }
  return { steps, inRoot };
}

describe('the inference image build, rehearsed without Docker', () => {
  it('builds the bundle and fetches and verifies the models from the context cdk stages', async () => {
    const build = dockerfile.stages.find((stage) => stage.name === 'build');
    expect(build, 'the Dockerfile has a stage named build').toBeDefined();
    const root = path.join(scratch, 'root');
    await mkdir(root);
    const { steps, inRoot } = await rehearse(
      build!,
      root,
      { ...source.dockerBuildArgs, MODELS_BASE_URL: mirrorUrl },
      // Without ../shared there is no mirror, and the official hosts are out of reach.
      (run) => !hasSharedModels && run.includes('bin/models.ts'),
    );
    expect(steps).toContain('npm ci (linked)');
    expect(steps.some((step) => step.includes('bundle.ts'))).toBe(true);

    // What the final stage copies out of the build stage is there.
    const final = dockerfile.stages.at(-1)!;
    const outputs = final.instructions
      .filter((instruction) => instruction.keyword === 'COPY')
      .map((instruction) => parseCopy(instruction.args))
      .filter((copy) => copy.from === 'build')
      .flatMap((copy) => copy.sources);
    expect(outputs.length).toBeGreaterThan(0);
    expect(readdirSync(path.join(root, 'build', 'dist'))).toContain('handler.mjs');
    for (const output of outputs) {
      if (!hasSharedModels && output.startsWith(inference.modelsDir)) continue;
      expect(existsSync(path.join(root, output)), `${output} after the build stage`).toBe(true);
    }
    expect(inRoot('.')).toBe(path.join(root, 'build'));

    if (hasSharedModels) {
      const models = readdirSync(path.join(root, inference.modelsDir)).filter((f) => !f.endsWith('.part'));
      expect(models.sort()).toEqual(SERVICE_MODELS.map((id) => MODELS[id].file).sort());
      // Every download went to the mirror, by file name.
      expect(served.length).toBeGreaterThan(0);
    }
  }, 300_000);
});

describe('the build context', () => {
  it('holds nothing but the allow-list of lib/config.ts (and what CDK adds)', () => {
    const top = readdirSync(context);
    const allowedTop = new Set([
      ...inference.contextAllowList.map((entry) => entry.split('/')[0]!),
      '.dockerignore',
    ]);
    for (const entry of top) expect(allowedTop.has(entry), `${entry} in the staged context`).toBe(true);
  });
});

describe('the image asset in the cloud assembly', () => {
  /** The Docker image asset of a stack holding only `PhotoJobs`, as the asset manifest records it. */
  function imageAsset(props: PhotoJobsProps, env: string | undefined): DockerImageAssetSource {
    const outdir = path.join(scratch, `asset-${Math.random().toString(36).slice(2)}`);
    const saved = process.env.MODELS_BASE_URL;
    if (env === undefined) delete process.env.MODELS_BASE_URL;
    else process.env.MODELS_BASE_URL = env;
    try {
      const app = createApp({ bundle: false, validate: false, outdir });
      new PhotoJobs(new Stack(app, 'Host'), 'Jobs', props);
      app.synth();
    } finally {
      if (saved === undefined) delete process.env.MODELS_BASE_URL;
      else process.env.MODELS_BASE_URL = saved;
    }
    const manifest = JSON.parse(readFileSync(path.join(outdir, 'Host.assets.json'), 'utf8')) as {
      dockerImages: Record<string, { source: DockerImageAssetSource }>;
    };
    return Object.values(manifest.dockerImages)[0]!.source;
  }

  it('passes the models mirror to the build: the prop over MODELS_BASE_URL at synth, else none', () => {
    const prop = 'https://models.example.com/prop';
    const env = 'https://models.example.com/env';
    expect(imageAsset({}, undefined).dockerBuildArgs).toBeUndefined();
    expect(imageAsset({}, '').dockerBuildArgs).toBeUndefined();
    expect(imageAsset({}, env).dockerBuildArgs).toEqual({ MODELS_BASE_URL: env });
    expect(imageAsset({ inference: { modelsBaseUrl: prop } }, env).dockerBuildArgs).toEqual({
      MODELS_BASE_URL: prop,
    });
  });

  it('builds for the function architecture: arm64 by default, amd64 for X86_64', () => {
    expect(imageAsset({}, undefined).platform).toBe('linux/arm64');
    expect(imageAsset({ inference: { architecture: lambda.Architecture.X86_64 } }, undefined).platform).toBe(
      'linux/amd64',
    );
  });
});
