import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inference, repoRoot } from '../../lib/config.ts';
import { installPackedInto } from './support/pack.ts';

/**
 * The construct as a deployer's app gets it (support/pack.ts: `npm pack`, unpacked as `npm install
 * <tarball>` would). The app imports `photo-jobs/cdk` by the package's exports and runs under
 * `node --import tsx` (the construct ships TypeScript); `photo-jobs/client` is plain JavaScript.
 */
const run = promisify(execFile);
let scratch = '';
let packed: string[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-package-'));
  ({ packed } = await installPackedInto(scratch, repoRoot));
}, 240_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the photo-jobs package', () => {
  it('ships what synth and the image build read: the lockfile, Dockerfile, context and pages', () => {
    for (const entry of inference.contextAllowList)
      expect(
        packed.some((file) => file === entry || file.startsWith(`${entry}/`)),
        `${entry} (image build context) in the package`,
      ).toBe(true);
    expect(packed).toContain('npm-shrinkwrap.json');
    expect(packed).toContain(inference.dockerfile);
    expect(packed).toContain('web/console/index.html');
    expect(packed.some((file) => file.startsWith('test/'))).toBe(false);
    // The client, built on pack: JavaScript and the declarations its `exports` name.
    expect(packed).toEqual(expect.arrayContaining(['dist/client/index.js', 'dist/types/client/index.d.ts']));
  });

  it('imports photo-jobs/client with plain node, no TypeScript loader', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const c = await import('photo-jobs/client'); console.log(Object.keys(c).sort().join(','));",
      ],
      { cwd: path.join(scratch, 'app') },
    );
    expect(stdout.trim().split(',')).toEqual(
      expect.arrayContaining(['createClient', 'verifyWebhook', 'PhotoJobsError']),
    );
  });

  it("synthesizes `new PhotoJobs(stack, 'Jobs', {})` imported from photo-jobs/cdk in an app", async () => {
    const app = path.join(scratch, 'app');
    await writeFile(
      path.join(app, 'app.ts'),
      [
        "import { App, Stack } from 'aws-cdk-lib';",
        "import { PhotoJobs } from 'photo-jobs/cdk';",
        'const app = new App();',
        "new PhotoJobs(new Stack(app, 'Storefront'), 'Jobs', {});",
        'app.synth();',
      ].join('\n'),
    );
    const outdir = path.join(scratch, 'cdk.out');
    // As `cdk synth` runs an app; esbuild off to stay fast, the image context staged from the package.
    await run(process.execPath, ['--import', 'tsx', 'app.ts'], {
      cwd: app,
      env: {
        ...process.env,
        MODELS_BASE_URL: '',
        CDK_OUTDIR: outdir,
        [cxapi.CONTEXT_ENV]: JSON.stringify({ [cxapi.BUNDLING_STACKS]: [] }),
      },
    });
    const template = JSON.parse(readFileSync(path.join(outdir, 'Storefront.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    expect(Object.values(template.Resources).map((r) => r.Type)).toEqual(
      expect.arrayContaining(['AWS::ApiGatewayV2::Api', 'AWS::StepFunctions::StateMachine']),
    );
    const assets = JSON.parse(readFileSync(path.join(outdir, 'Storefront.assets.json'), 'utf8')) as {
      dockerImages: Record<string, { source: { directory: string } }>;
    };
    const context = path.join(outdir, Object.values(assets.dockerImages)[0]!.source.directory);
    for (const entry of inference.contextAllowList)
      expect(existsSync(path.join(context, entry)), `${entry} in the staged image context`).toBe(true);
    expect(existsSync(path.join(context, 'node_modules'))).toBe(false);
  }, 120_000);
});
