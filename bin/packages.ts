/**
 * `npm run packages [-- client|cdk]`: the two packages users install, built from this repository and
 * packed into dist/packages/*.tgz (docs/decisions/0054-what-users-install.md). The manifests are written
 * here; what they state (version, licence, the aws-cdk-lib and constructs ranges) comes from package.json.
 * - `photo-jobs-client`: the typed client and the `photo-jobs` CLI as ESM JavaScript with one declaration
 *   file, and no dependencies. Its types are the server's schemas, expanded into plain object types so that
 *   a consumer's compiler needs neither zod nor our sources.
 * - `photo-jobs-cdk`: the constructs as ESM and CommonJS with declarations; `aws-cdk-lib` and `constructs`
 *   are peer dependencies. It carries what CDK built from this repository at synth: each zip function's
 *   bundle (as a zip) and the inference image's build context (lib/config.ts `prebuilt`), so a deployer's
 *   app needs neither esbuild, sharp, onnxruntime-node nor the model weights; the image build fetches those.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { repoRoot } from '../lib/config.ts';
import { ESM_REQUIRE_BANNER } from '../lib/constructs/handler-function.ts';
import { clientDeclarations, declarationClosure, formatted } from './packages/declarations.ts';
import { buildPrebuilt } from './packages/prebuilt.ts';

const run = promisify(execFile);
const defaultOutRoot = path.join(repoRoot, 'dist', 'packages');
const rootManifest = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  engines: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The names users search for (README, "From code and from a terminal"). */
export const PACKAGE_NAMES = { client: 'photo-jobs-client', cdk: 'photo-jobs-cdk' } as const;
type PackageKind = keyof typeof PACKAGE_NAMES;

const common = {
  version: rootManifest.version,
  license: rootManifest.license,
  type: 'module',
  engines: rootManifest.engines,
};

/**
 * One bundle of `entry`: ESM, or CommonJS for `require` (where `import.meta.url` is made from `__filename`,
 * so that lib/config.ts finds the package's own folder either way).
 */
async function bundle(
  entry: string,
  outfile: string,
  options: { external?: string[]; banner?: string; format?: 'esm' | 'cjs' } = {},
) {
  const format = options.format ?? 'esm';
  const shim =
    format === 'esm'
      ? ESM_REQUIRE_BANNER
      : "const __photoJobsImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";
  await build({
    entryPoints: [path.join(repoRoot, entry)],
    outfile,
    bundle: true,
    format,
    platform: 'node',
    target: 'node20',
    external: options.external ?? [],
    banner: { js: [options.banner, shim].filter(Boolean).join('\n') },
    define: format === 'cjs' ? { 'import.meta.url': '__photoJobsImportMetaUrl' } : {},
    keepNames: true,
    legalComments: 'inline',
    logLevel: 'warning',
  });
}

/** The package's README (what npm shows) and its manifest, with what both packages state alike. */
async function describePackage(dir: string, readme: string, manifest: Record<string, unknown>) {
  await writeFile(path.join(dir, 'README.md'), `# ${manifest.name}\n\n${readme}\n`);
  await writeFile(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: manifest.name, ...common, ...manifest }, null, 2)}\n`,
  );
}

async function buildClient(dir: string) {
  await bundle('client/index.ts', path.join(dir, 'index.js'));
  await bundle('client/bin.ts', path.join(dir, 'cli.js'), { banner: '#!/usr/bin/env node' });
  await writeFile(path.join(dir, 'index.d.ts'), await formatted(clientDeclarations(), 'index.d.ts'));
  await describePackage(
    dir,
    'The typed client and the `photo-jobs` command of the photo-jobs API: see the project README.',
    {
      name: PACKAGE_NAMES.client,
      description:
        'Typed client and CLI for the photo-jobs API (car photo jobs: plates, backgrounds, analysis).',
      keywords: ['photo-jobs', 'car photos', 'background removal', 'license plate', 'client'],
      exports: { '.': { types: './index.d.ts', default: './index.js' } },
      types: './index.d.ts',
      bin: { 'photo-jobs': './cli.js' },
      files: ['index.js', 'index.d.ts', 'cli.js'],
    },
  );
}

async function buildCdk(dir: string, assembly?: string) {
  // ESM for `import`, CommonJS for `require` (the app `cdk init --language javascript` makes).
  const external = ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'];
  await bundle('lib/index.ts', path.join(dir, 'lib', 'index.js'), { external });
  await bundle('lib/index.ts', path.join(dir, 'lib', 'index.cjs'), { external, format: 'cjs' });
  for (const [file, text] of declarationClosure('lib/index.ts', ['aws-cdk-lib', 'constructs'])) {
    await mkdir(path.join(dir, 'types', path.dirname(file)), { recursive: true });
    await writeFile(path.join(dir, 'types', file), text);
  }
  await buildPrebuilt(dir, assembly);
  await describePackage(
    dir,
    "The photo-jobs service as an AWS CDK v2 construct: `new PhotoJobs(stack, 'Jobs', {})`. See docs/deploy.md of the project.",
    {
      name: PACKAGE_NAMES.cdk,
      description:
        'AWS CDK v2 construct of the photo-jobs service: HTTP API, Step Functions job workflow and ONNX inference on Lambda.',
      keywords: ['photo-jobs', 'awscdk', 'aws-cdk', 'cdk-construct', 'car photos'],
      exports: {
        '.': { types: './types/lib/index.d.ts', import: './lib/index.js', require: './lib/index.cjs' },
      },
      types: './types/lib/index.d.ts',
      peerDependencies: {
        'aws-cdk-lib': `^${rootManifest.devDependencies['aws-cdk-lib']}`,
        constructs: `^${rootManifest.devDependencies.constructs}`,
      },
      files: ['lib', 'types', 'prebuilt'],
    },
  );
}

/**
 * Builds one package in `<outRoot>/<kind>` and packs it into `outRoot`; returns the tarball's path. The
 * construct package takes its bundles from `assembly` when given (a cloud assembly of this app synthesized
 * with bundling on), else from a synth of its own.
 */
export async function buildPackage(
  kind: PackageKind,
  outRoot = defaultOutRoot,
  options: { assembly?: string } = {},
): Promise<{ tarball: string; unpackedBytes: number }> {
  const dir = path.join(outRoot, kind);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await (kind === 'client' ? buildClient(dir) : buildCdk(dir, options.assembly));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', outRoot], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; unpackedSize: number }>;
  return { tarball: path.join(outRoot, packed!.filename), unpackedBytes: packed!.unpackedSize };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kinds = (
    process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['client', 'cdk']
  ) as PackageKind[];
  for (const kind of kinds) {
    if (!(kind in PACKAGE_NAMES)) throw new Error(`unknown package ${kind}: client or cdk`);
    const started = performance.now();
    const { tarball, unpackedBytes } = await buildPackage(kind);
    console.log(
      `${PACKAGE_NAMES[kind]}: ${path.relative(process.cwd(), tarball)} (${(unpackedBytes / 1e6).toFixed(1)} MB unpacked, ${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
}
