import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackage, PACKAGE_NAMES } from '../../bin/packages.ts';
import { inference } from '../../lib/config.ts';
import { PhotoJobs } from '../../lib/index.ts';
import { bundledAssembly } from '../support/assembly.ts';
import {
  type ConsumerKind,
  consumersAreWarm,
  folderBytes,
  installOffline,
  makeConsumer,
  runOffline,
} from './support/consumer-projects.ts';

/**
 * The two packages as their users get them (docs/decisions/0054-what-users-install.md): built and packed by
 * bin/packages.ts, installed from the tarball into projects made by `cdk init` and `npm init`, and
 * used there with the projects' own commands. Installs come from npm's cache (`npm run warm-consumers`);
 * without it these tests skip, except under CI, where .ci/run fills the cache and a miss fails.
 */
const MB = 1_000_000;
const runs = consumersAreWarm() || Boolean(process.env.CI);
let scratch = '';
const tarballs = { client: '', cdk: '' };

beforeAll(async () => {
  if (!runs) return;
  scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-packages-'));
  tarballs.client = (await buildPackage('client', scratch)).tarball;
  const { dir: assembly } = await bundledAssembly();
  tarballs.cdk = (await buildPackage('cdk', scratch, { assembly })).tarball;
}, 300_000);

// Three installed projects, about 600 MB of node_modules.
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 120_000);

const installedPackages = (dir: string) =>
  readdirSync(path.join(dir, 'node_modules')).flatMap((entry) =>
    entry.startsWith('.')
      ? []
      : entry.startsWith('@')
        ? readdirSync(path.join(dir, 'node_modules', entry)).map((name) => `${entry}/${name}`)
        : [entry],
  );

/**
 * A consumer project, installed as its tool made it and then with our tarball: the bytes and the
 * packages that the tarball added.
 */
async function installInto(kind: ConsumerKind, tarball: string) {
  const dir = await makeConsumer(kind, path.join(scratch, kind, 'storefront'));
  await installOffline(dir);
  const before = {
    bytes: await folderBytes(path.join(dir, 'node_modules')),
    packages: installedPackages(dir),
  };
  await installOffline(dir, [tarball]);
  const added = (await folderBytes(path.join(dir, 'node_modules'))) - before.bytes;
  const addedPackages = installedPackages(dir).filter((name) => !before.packages.includes(name));
  console.log(
    `${path.basename(tarball)} added ${(added / MB).toFixed(2)} MB to ${kind}'s node_modules ` +
      `(${(before.bytes / MB).toFixed(0)} MB before): ${addedPackages.join(', ')}`,
  );
  return { dir, added, addedPackages };
}

/**
 * A template's resources by type and properties, every 64-hex asset hash (and the keys made of one)
 * masked, and without the CLI's own analytics resource (`AWS::CDK::Metadata`), so that two syntheses compare
 * by what they deploy.
 */
function deployedResources(template: { Resources: Record<string, { Type: string; Properties?: unknown }> }) {
  const resources = Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type !== 'AWS::CDK::Metadata')
    .map(([id, resource]) => [id, { Type: resource.Type, Properties: resource.Properties }]);
  return JSON.parse(JSON.stringify(Object.fromEntries(resources)).replace(/[0-9a-f]{64}/g, '<hash>'));
}

describe.skipIf(!runs)(`${PACKAGE_NAMES.client} in a strict TypeScript project made by npm init`, () => {
  it('adds under 1 MB and nothing of the service, type-checks under NodeNext without skipLibCheck, catches misuse, and brings the photo-jobs command', async () => {
    const { dir, added, addedPackages } = await installInto('client-typescript', tarballs.client);
    expect(added).toBeLessThan(1 * MB);
    // Nothing but itself: no zod, sharp, onnxruntime-node, AWS SDK or cli-progress.
    expect(addedPackages).toEqual([PACKAGE_NAMES.client]);

    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
    await writeFile(
      path.join(dir, 'main.ts'),
      [
        "import { createClient, type JobEnvelope, PhotoJobsError, verifyWebhook } from 'photo-jobs-client';",
        "const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'key' });",
        'export async function publish(photo: string): Promise<string | undefined> {',
        "  const created = await client.createJob({ mode: 'studio_background', file: photo, background: 'warm' });",
        '  const job: JobEnvelope = await client.waitForJob(created.id);',
        "  if (job.status === 'failed') throw new Error(job.message ?? String(job.code));",
        '  return job.url;',
        '}',
        "export const genuine = (body: string, header: string) => verifyWebhook(body, header, 'whsec_x');",
        'export const refused = (error: unknown) => error instanceof PhotoJobsError && error.status === 402;',
      ].join('\n'),
    );
    // Each line is an error only while the types are real: `any` would make these expectations unused.
    await writeFile(
      path.join(dir, 'misuse.ts'),
      [
        "import { createClient, type Job } from 'photo-jobs-client';",
        "const client = createClient({ baseUrl: 'http://127.0.0.1:3000' });",
        '// @ts-expect-error: not an operation',
        "void client.createJob({ mode: 'sharpen' });",
        'export const status = (job: Job): number =>',
        '  // @ts-expect-error: a status is a word',
        '  job.status;',
      ].join('\n'),
    );
    await runOffline(path.join(dir, 'node_modules', '.bin', 'tsc'), ['-p', '.'], { cwd: dir });

    // The CLI comes with it, as the `photo-jobs` command.
    const { stdout } = await runOffline(path.join(dir, 'node_modules', '.bin', 'photo-jobs'), ['--help'], {
      cwd: dir,
    });
    expect(stdout).toContain('photo-jobs jobs create --mode MODE');
  }, 240_000);
});

describe.skipIf(!runs)(`${PACKAGE_NAMES.cdk} in the apps cdk init makes`, () => {
  /** `cdk init`'s stack file with the one import and the one construct a deployer adds. */
  async function addPhotoJobs(dir: string, language: 'typescript' | 'javascript', props = '{}') {
    const extension = language === 'typescript' ? 'ts' : 'js';
    const stackFile = path.join(dir, 'lib', `storefront-stack.${extension}`);
    const original = await readFile(stackFile, 'utf8');
    const importLine =
      language === 'typescript'
        ? "import { PhotoJobs } from 'photo-jobs-cdk';\nimport * as lambda from 'aws-cdk-lib/aws-lambda';\n"
        : "const { PhotoJobs } = require('photo-jobs-cdk');\nconst lambda = require('aws-cdk-lib/aws-lambda');\n";
    const superCall = /super\(scope, id, props\);\n/;
    expect(original).toMatch(superCall);
    await writeFile(
      stackFile,
      importLine +
        original.replace(superCall, (call) => `${call}    new PhotoJobs(this, 'Jobs', ${props});\n`),
    );
  }

  async function synth(dir: string) {
    await rm(path.join(dir, 'cdk.out'), { recursive: true, force: true });
    // The app's own command (`npx cdk synth`), which runs cdk.json's app: `npx tsc && npx tsx …` for TypeScript.
    await runOffline(path.join(dir, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '--no-notices'], {
      cwd: dir,
      env: { MODELS_BASE_URL: '' },
    });
    const read = (file: string) => JSON.parse(readFileSync(path.join(dir, 'cdk.out', file), 'utf8'));
    return {
      template: read('StorefrontStack.template.json') as {
        Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
      },
      assets: read('StorefrontStack.assets.json') as {
        dockerImages: Record<
          string,
          { source: { directory: string; dockerBuildArgs?: object; platform?: string } }
        >;
      },
    };
  }

  const resourcesOf = (template: {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  }) => Object.values(template.Resources);

  for (const language of ['typescript', 'javascript'] as const) {
    it(`cdk init app --language ${language}: npx cdk synth passes with the API, the three state machines (job runs, their follow-up, batch archives) and the inference image, and the package adds under 60 MB without the model runtime`, async () => {
      const { dir, added, addedPackages } = await installInto(`cdk-${language}`, tarballs.cdk);
      expect(added).toBeLessThan(60 * MB);
      // Nothing but itself beside the app's aws-cdk-lib and constructs: no onnxruntime-node, sharp or weights.
      expect(addedPackages).toEqual([PACKAGE_NAMES.cdk]);
      await addPhotoJobs(dir, language);
      const { template, assets } = await synth(dir);
      const types = resourcesOf(template).map((resource) => resource.Type);
      expect(types).toContain('AWS::ApiGatewayV2::Api');
      expect(types.filter((type) => type === 'AWS::StepFunctions::StateMachine')).toHaveLength(3);
      const functions = resourcesOf(template).filter((resource) => resource.Type === 'AWS::Lambda::Function');
      expect(functions.filter((fn) => fn.Properties.PackageType === 'Image')).toHaveLength(1);
      expect(functions.filter((fn) => fn.Properties.Handler === 'index.handler').length).toBeGreaterThan(20);
      // The image is built from the context the package carries: what the Dockerfile copies, no dependencies.
      const [image] = Object.values(assets.dockerImages);
      const context = path.join(dir, 'cdk.out', image!.source.directory);
      for (const entry of inference.contextAllowList)
        expect(existsSync(path.join(context, entry)), `${entry} in the staged image context`).toBe(true);
      expect(existsSync(path.join(context, inference.dockerfile))).toBe(true);
      expect(existsSync(path.join(context, 'node_modules'))).toBe(false);
      // `import` and `require` find the same constructs (the ESM and the CommonJS build).
      const exportsBy = async (load: string) =>
        (
          await runOffline(
            process.execPath,
            ['-e', `${load}.then((m) => console.log(Object.keys(m).sort().join()))`],
            { cwd: dir },
          )
        ).stdout.trim();
      const imported = await exportsBy("import('photo-jobs-cdk')");
      expect(imported.split(',')).toEqual(
        expect.arrayContaining(['MasterKey', 'PhotoJobs', 'PhotoJobsData']),
      );
      expect(await exportsBy("Promise.resolve(require('photo-jobs-cdk'))")).toBe(imported);
    }, 420_000);
  }

  it("is this repository's construct: the same template apart from asset hashes, x86_64 and modelsBaseUrl included", async () => {
    const dir = path.join(scratch, 'cdk-typescript', 'storefront');
    const stackFile = path.join(dir, 'lib', 'storefront-stack.ts');
    const mirror = 'https://models.example.com/photo-jobs';
    await writeFile(
      stackFile,
      (await readFile(stackFile, 'utf8')).replace(
        "new PhotoJobs(this, 'Jobs', {});",
        `new PhotoJobs(this, 'Jobs', { inference: { architecture: lambda.Architecture.X86_64, modelsBaseUrl: '${mirror}' } });`,
      ),
    );
    const { template, assets } = await synth(dir);
    const [image] = Object.values(assets.dockerImages);
    expect(image!.source.platform).toBe('linux/amd64');
    expect(image!.source.dockerBuildArgs).toEqual({ MODELS_BASE_URL: mirror });

    // The same construct from this repository's sources, under the app's own feature flags.
    const cdkJson = JSON.parse(readFileSync(path.join(dir, 'cdk.json'), 'utf8')) as { context: object };
    const app = new App({
      outdir: path.join(scratch, 'repository-synth'),
      context: { ...cdkJson.context, [cxapi.BUNDLING_STACKS]: [] },
    });
    const stack = new Stack(app, 'StorefrontStack');
    new PhotoJobs(stack, 'Jobs', {
      inference: { architecture: lambda.Architecture.X86_64, modelsBaseUrl: mirror },
    });
    const ours = app.synth().getStackArtifact(stack.artifactId).template;
    expect(deployedResources(template)).toEqual(deployedResources(ours));
  }, 240_000);

  it('refuses an aws-cdk-lib older than its peer range with a message that says so, at synth', async () => {
    const dir = path.join(scratch, 'cdk-javascript', 'storefront');
    const manifestFile = path.join(dir, 'node_modules', 'aws-cdk-lib', 'package.json');
    const manifest = await readFile(manifestFile, 'utf8');
    // An older release, as the app's installer would leave it after npm's peer warning.
    await writeFile(manifestFile, manifest.replace(/"version": "[^"]+"/, '"version": "2.100.0"'));
    try {
      const failure = await synth(dir).then(
        () => undefined,
        (error: { stderr: string }) => error.stderr,
      );
      expect(failure).toContain('photo-jobs-cdk needs aws-cdk-lib ^');
      expect(failure).toContain('this app has aws-cdk-lib 2.100.0');
    } finally {
      await writeFile(manifestFile, manifest);
    }
  }, 240_000);
});
