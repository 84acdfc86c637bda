import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/config.ts';

const outdir = mkdtempSync(join(tmpdir(), 'photo-jobs-deploy-doc-'));
mkdirSync(join(repoRoot, '.cache'), { recursive: true });
const exampleDir = mkdtempSync(join(repoRoot, '.cache', 'deploy-doc-'));
afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
  rmSync(exampleDir, { recursive: true, force: true });
});

describe('docs/deploy.md', () => {
  it('embeds the construct with an example that synthesizes as written', async () => {
    const doc = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const example = doc.match(/## Embed the construct[\s\S]*?```ts\n([\s\S]*?)```/)?.[1];
    expect(example).toContain("from 'photo-jobs-cdk'");
    // As written, the package's name pointed at the entry it is built from (bin/packages.ts), so a
    // missing export fails here as it would in a deployer's app; test/infra/packages.test.ts installs the
    // package itself.
    const file = join(exampleDir, 'app.ts');
    // The stack as the doc shows it, in the app `cdk init` makes around it.
    const app = "const app = new cdk.App();\nnew StorefrontStack(app, 'Storefront');\napp.synth();\n";
    const entry = pathToFileURL(join(repoRoot, 'lib/index.ts')).href;
    writeFileSync(file, `${example!.replace("'photo-jobs-cdk'", `'${entry}'`)}\n${app}`);
    // As `cdk synth` runs an app: outdir and context from the environment; no bundling, to stay fast.
    const saved = { outdir: process.env.CDK_OUTDIR, context: process.env[cxapi.CONTEXT_ENV] };
    process.env.CDK_OUTDIR = outdir;
    process.env[cxapi.CONTEXT_ENV] = JSON.stringify({
      [cxapi.BUNDLING_STACKS]: [],
      [cxapi.DISABLE_ASSET_STAGING_CONTEXT]: true,
    });
    try {
      await import(pathToFileURL(file).href);
    } finally {
      process.env.CDK_OUTDIR = saved.outdir;
      process.env[cxapi.CONTEXT_ENV] = saved.context;
      if (saved.outdir === undefined) delete process.env.CDK_OUTDIR;
      if (saved.context === undefined) delete process.env[cxapi.CONTEXT_ENV];
    }
    expect(readdirSync(outdir)).toContain('Storefront.template.json');
    const template = JSON.parse(readFileSync(join(outdir, 'Storefront.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
      Outputs: Record<string, unknown>;
    };
    const types = Object.values(template.Resources).map((r) => r.Type);
    expect(types).toEqual(
      expect.arrayContaining(['AWS::ApiGatewayV2::Api', 'AWS::StepFunctions::StateMachine']),
    );
    expect(Object.keys(template.Outputs)).toContain('PhotoJobsApiUrl');
    const stage = Object.values(template.Resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
    expect(stage?.Properties?.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 50,
      ThrottlingBurstLimit: 100,
    });
  });
});
