import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inference, repoRoot } from '../../lib/config.ts';

/**
 * The construct as a deployer's app gets it: `npm pack` of this repository, unpacked into the app's
 * node_modules/photo-jobs as `npm install <tarball>` would, its dependencies (and the app's own:
 * aws-cdk-lib, constructs, tsx) linked from this project's install, since the registry is out of reach.
 * The app imports `photo-jobs/cdk` by the package's exports and runs under `node --import tsx` (the
 * construct ships TypeScript).
 */
const run = promisify(execFile);
let scratch = '';
let packed: string[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'photo-jobs-package-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: repoRoot });
  const [pack] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = pack!.files.map((file) => file.path);
  const app = path.join(scratch, 'app');
  const installed = path.join(app, 'node_modules', 'photo-jobs');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', path.join(scratch, pack!.filename), '-C', installed, '--strip-components=1']);
  for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'photo-jobs') continue;
    await symlink(path.join(repoRoot, 'node_modules', entry), path.join(app, 'node_modules', entry));
  }
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'storefront', type: 'module' }));
}, 120_000);

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
