import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type * as cdk from 'aws-cdk-lib';
import { AssetHashType, type CfnResource, DockerImage, type Duration } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { BuildOptions } from 'esbuild';
import { bundledFilesOf, handlerMetadataKey, prebuilt, repoRoot } from '../config.ts';
import { acknowledge } from './acknowledge.ts';
import { createLogGroup } from './log-group.ts';
import { functionTracing, type TracingMode } from './tracing.ts';

export interface HandlerFunctionProps {
  /** Repo-relative entry file, e.g. `functions/api/get-job/handler.ts`. */
  handler: string;
  environment: Record<string, string>;
  memorySize: number;
  timeout: Duration;
  /** Shared role; when absent the function gets its own. */
  role?: iam.IRole;
  logRetention?: logs.RetentionDays;
  /** PhotoJobsProps.tracing: the function's TracingConfig and the switch its code reads. */
  tracing: TracingMode;
}

/** `functions/api/get-job/handler.ts` -> `GetJob`: the construct id of a handler's function. */
export const constructIdOf = (handler: string): string =>
  (handler.split('/').at(-2) ?? handler)
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * Some CommonJS dependencies call `require` at run time, which an ESM bundle does not define: every ESM
 * bundle we build starts with this (the construct package's too, bin/packages.ts).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __photoJobsCreateRequire } from 'node:module'; const require = __photoJobsCreateRequire(import.meta.url);";

const NODE_PROCESS = join(repoRoot, 'layers/node-process.cjs');

/** What makes Node read a bundle's source map; a function gets its map bundled only when it runs with this. */
export const sourceMapsEnvironment = { NODE_OPTIONS: '--enable-source-maps' } as const;
const readsSourceMaps = (environment: Record<string, string>) =>
  environment.NODE_OPTIONS?.split(' ').includes(sourceMapsEnvironment.NODE_OPTIONS) ?? false;

/**
 * The esbuild settings of a zip function: `index.mjs` exporting `handler`, and beside it `chunks/`, the code
 * only a dynamic `import()` reaches (layers/aws/wiring.ts imports an adapter and its SDK package on its first
 * call). Node reads and compiles a chunk only when it is imported, so a cold start pays for what the
 * handler loads, not for all it could reach (`npm run bench -- coldstart`); ./one-file-at-init.ts then puts
 * all that it loads in `index.mjs`. The AWS SDK v3 is bundled rather than taken from the runtime:
 * package.json pins it, and the runtime's copy moves under us between deploys; with ESM output esbuild
 * tree-shakes it to what a handler uses.
 */
const zipBundleOptions = (entry: string, outdir: string, sourcemap: boolean): BuildOptions => ({
  entryPoints: { index: entry },
  outdir,
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  mainFields: ['module', 'main'],
  minify: true,
  // Class names survive minification (error names are literals anyway: layers/core/error-names.ts).
  keepNames: true,
  sourcemap,
  // Stack traces only need positions; leaving sources out keeps the zip small.
  sourcesContent: false,
  banner: { js: ESM_REQUIRE_BANNER },
  // The global process, whose streams open only when something prints (layers/node-process.cjs says why).
  alias: { 'node:process': NODE_PROCESS, process: NODE_PROCESS },
  logLevel: 'warning',
});

/** Re-chunks a bundle so that its init reads one file (a script: bundling is synchronous, Rollup is not). */
const ONE_FILE_AT_INIT = join(repoRoot, 'lib/constructs/one-file-at-init.ts');

/**
 * Bundles with the esbuild from devDependencies, in this process: offline, no Docker. Required here, at
 * bundling, not imported: the construct package carries its bundles built already and has no esbuild.
 */
function localBundling(handler: string, sourcemap: boolean): cdk.BundlingOptions {
  const entry = join(repoRoot, handler);
  return {
    // Never pulled: the local bundling below always bundles or throws.
    image: DockerImage.fromRegistry('esbuild-runs-locally'),
    // CDK reuses a bundle for equal bundling options, and `local` does not count: these make them differ.
    environment: { ENTRY: handler, SOURCEMAP: String(sourcemap) },
    local: {
      tryBundle(outputDir) {
        const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
        esbuild.buildSync(zipBundleOptions(entry, outputDir, sourcemap));
        // Rollup cannot carry esbuild's source maps over: a function built with them keeps esbuild's chunks.
        if (!sourcemap)
          execFileSync(process.execPath, ['--import', 'tsx', ONE_FILE_AT_INIT, outputDir], {
            cwd: repoRoot,
            stdio: 'inherit',
          });
        // The files a function reads at run time, beside its bundle (config.ts `bundledFilesOf`).
        for (const { from, to } of bundledFilesOf(handler)) {
          mkdirSync(dirname(join(outputDir, to)), { recursive: true });
          cpSync(resolve(repoRoot, from), join(outputDir, to), { recursive: true });
        }
        return true;
      },
    },
  };
}

/** The cdk-nag findings every function of the service shares, acknowledged on the function. */
export function acknowledgeFunctionFindings(fn: lambda.Function): void {
  acknowledge(fn, {
    'AwsSolutions-L1':
      'Node.js 22 on purpose: the inference image base (public.ecr.aws/lambda/nodejs:22) and the bundle target match it.',
    'Serverless-LambdaLatestVersion':
      'Node.js 22 on purpose: the inference image base (public.ecr.aws/lambda/nodejs:22) and the bundle target match it.',
    'Serverless-LambdaDLQ':
      'Invoked synchronously only (API Gateway, Step Functions): the caller sees every failure; there is no async event to lose.',
  });
  if (fn.role && fn.node.tryFindChild('ServiceRole')) acknowledgeBasicExecutionRole(fn.role);
}

/** Lambda's managed logging policy: CloudWatch Logs writes only. */
export function acknowledgeBasicExecutionRole(role: iam.IRole): void {
  acknowledge(role, {
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
      'AWSLambdaBasicExecutionRole grants only logs:CreateLogGroup/CreateLogStream/PutLogEvents for the function.',
  });
}

/** Records the entry file on the CloudFormation resource; the local server maps template -> module by it. */
export function tagHandler(fn: lambda.IFunction, handler: string): void {
  (fn.node.defaultChild as CfnResource).addMetadata(handlerMetadataKey, handler);
}

/** The bundle's entry: `index.mjs`, exporting `handler`. */
const BUNDLE_HANDLER = 'index.handler';

/**
 * A zip Lambda built from one TypeScript entry file with the shared bundling settings. A missing entry file
 * fails the synth, so a deleted handler cannot silently drop its route or task. Where the construct package
 * carries the bundle built already (config.ts `prebuilt`), that bundle is the code, with the same handler
 * and settings, so a deployer's app needs neither esbuild nor our dependencies.
 */
export function createHandlerFunction(
  scope: Construct,
  id: string,
  props: HandlerFunctionProps,
): lambda.Function {
  const prebuiltBundle = join(repoRoot, prebuilt.bundleOf(props.handler));
  const fromSources = !existsSync(prebuiltBundle);
  if (fromSources && !existsSync(join(repoRoot, props.handler)))
    throw new Error(`Cannot find entry file at ${join(repoRoot, props.handler)}`);
  const tracing = functionTracing(props.tracing);
  const fn = new lambda.Function(scope, id, {
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    environment: { ...props.environment, ...tracing.environment },
    role: props.role,
    logGroup: createLogGroup(scope, `${id}Logs`, props.logRetention),
    tracing: tracing.tracing,
    handler: BUNDLE_HANDLER,
    code: fromSources
      ? lambda.Code.fromAsset(repoRoot, {
          // The hash of what was built, as NodejsFunction does: hashing the sources would read node_modules.
          assetHashType: AssetHashType.OUTPUT,
          bundling: localBundling(props.handler, readsSourceMaps(props.environment)),
        })
      : lambda.Code.fromAsset(prebuiltBundle),
  });
  tagHandler(fn, props.handler);
  acknowledgeFunctionFindings(fn);
  return fn;
}
