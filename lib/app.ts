import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Tags } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { repoRoot, stackNames } from './config.ts';
import { DataStack } from './stacks/data-stack.ts';
import { ServiceStack } from './stacks/service-stack.ts';

export interface BuildOptions {
  /**
   * Run esbuild for the zip functions. `false` skips bundling and asset staging entirely: the templates
   * are the same apart from asset hashes, and synthesis takes a second or two.
   */
  bundle?: boolean;
  /**
   * Copy the assets into the cloud assembly (`asset.<hash>` folders) even when `bundle` is false: esbuild
   * stays off, but the inference image's build context is staged as `cdk deploy` would send it.
   * Default: the same as `bundle`.
   */
  stageAssets?: boolean;
  /** Where the cloud assembly goes; CDK picks (or the CLI sets) one when absent. */
  outdir?: string;
  /**
   * Run CDK's built-in CloudFormation validation at synth (default true). It costs about two seconds, so
   * `synthesizeTemplates` turns it off unless asked.
   */
  validate?: boolean;
}

export interface CfnTemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DependsOn?: string | string[];
  [key: string]: unknown;
}

/** The parts of a synthesized CloudFormation template that readers of it rely on. */
export interface CfnTemplate {
  Resources: Record<string, CfnTemplateResource>;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: string } }>;
  [key: string]: unknown;
}

/** cdk.json's feature flags, so that a synth outside the CLI (tests, local server) yields the same templates. */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')) as { context?: object };
  return { ...cdkJson.context };
}

/** An App with the project's feature flags; `bundle: false` skips esbuild and asset staging. */
export function createApp(options: BuildOptions = {}): App {
  const bundle = options.bundle ?? true;
  const stage = options.stageAssets ?? bundle;
  return new App({
    outdir: options.outdir,
    context: {
      // Locks in today's behaviour and silences CDK's warning; cdk.json may override it.
      '@aws-cdk/core:defaultCrossStackReferences': 'strong',
      ...cdkJsonContext(),
    },
    // Applied after the CLI's context, so `bundle: false` wins even under `cdk synth`.
    postCliContext: {
      ...(bundle ? {} : { [cxapi.BUNDLING_STACKS]: [] }),
      ...(stage ? {} : { [cxapi.DISABLE_ASSET_STAGING_CONTEXT]: true }),
    },
    analyticsReporting: false,
    builtinCloudFormationValidation: options.validate ?? true,
  });
}

export function buildApp(options: BuildOptions = {}): {
  app: App;
  dataStack: DataStack;
  serviceStack: ServiceStack;
} {
  const app = createApp(options);
  Tags.of(app).add('project', 'photo-jobs');

  const dataStack = new DataStack(app, stackNames.data, {
    description: 'photo-jobs: table and bucket (stateful, retained)',
  });
  const serviceStack = new ServiceStack(app, stackNames.service, {
    description: 'photo-jobs: HTTP API, functions and the job workflow',
    table: dataStack.table,
    bucket: dataStack.bucket,
  });
  return { app, dataStack, serviceStack };
}

/**
 * The CloudFormation templates of both stacks. Bundling and validation are off unless asked for: callers
 * read the templates (routes, state machine definition, table schema), not the code assets, and want them
 * fast. Without an `outdir` the assembly goes to a temporary folder that is removed afterwards.
 */
export function synthesizeTemplates(options: BuildOptions = {}): { data: CfnTemplate; service: CfnTemplate } {
  const outdir = options.outdir ?? mkdtempSync(join(tmpdir(), 'photo-jobs-synth-'));
  try {
    const { app, dataStack, serviceStack } = buildApp({ bundle: false, validate: false, ...options, outdir });
    const assembly = app.synth();
    return {
      data: assembly.getStackArtifact(dataStack.artifactId).template as CfnTemplate,
      service: assembly.getStackArtifact(serviceStack.artifactId).template as CfnTemplate,
    };
  } finally {
    if (!options.outdir) rmSync(outdir, { recursive: true, force: true });
  }
}
