import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CfnResource, Duration } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { bundledFilesOf, handlerMetadataKey, prebuilt, repoRoot } from '../config.ts';
import { acknowledge } from './acknowledge.ts';
import { createLogGroup } from './log-group.ts';

export interface HandlerFunctionProps {
  /** Repo-relative entry file, e.g. `functions/api/get-job/handler.ts`. */
  handler: string;
  environment: Record<string, string>;
  memorySize: number;
  timeout: Duration;
  /** Shared role; when absent the function gets its own. */
  role?: iam.IRole;
  logRetention?: logs.RetentionDays;
}

/** `functions/api/get-job/handler.ts` -> `GetJob`: the construct id of a handler's function. */
export const constructIdOf = (handler: string): string =>
  (handler.split('/').at(-2) ?? handler)
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * The AWS SDK v3 is bundled rather than taken from the runtime: package.json pins it, and the runtime's
 * copy moves under us between deploys. With ESM output esbuild tree-shakes it to what a handler uses.
 */
/**
 * Some CommonJS dependencies call `require` at run time, which an ESM bundle does not define: every ESM
 * bundle we build starts with this (the construct package's too, bin/packages.ts).
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __photoJobsCreateRequire } from 'node:module'; const require = __photoJobsCreateRequire(import.meta.url);";

const bundling: nodejs.BundlingOptions = {
  format: nodejs.OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  minify: true,
  // Class names survive minification (error names are literals anyway: layers/core/error-names.ts).
  keepNames: true,
  sourceMap: true,
  // Stack traces only need positions; leaving sources out keeps the zip small.
  sourcesContent: false,
  externalModules: [],
  banner: ESM_REQUIRE_BANNER,
  // Bundle with the esbuild from devDependencies: offline, no Docker.
  forceDockerBundling: false,
};

/** Copies the files a function reads at run time next to its bundle (config.ts `bundledFilesOf`). */
function copyFilesHook(files: ReadonlyArray<{ from: string; to: string }>): nodejs.ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      files.map(
        ({ from, to }) =>
          `mkdir -p "${join(outputDir, to, '..')}" && cp -R "${resolve(inputDir, from)}" "${join(outputDir, to)}"`,
      ),
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

/** NodejsFunction's handler for an ESM bundle: `index.mjs`, exporting `handler`. */
const PREBUILT_HANDLER = 'index.handler';

/**
 * A zip Lambda built from one TypeScript entry file with the shared bundling settings. A missing entry file
 * fails the synth (NodejsFunction checks it), so a deleted handler cannot silently drop its route or task.
 * Where the construct package carries the bundle built already (config.ts `prebuilt`), that bundle is the
 * code, with the same handler and settings, so a deployer's app needs neither esbuild nor our dependencies.
 */
export function createHandlerFunction(
  scope: Construct,
  id: string,
  props: HandlerFunctionProps,
): lambda.Function {
  const settings = {
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    environment: props.environment,
    role: props.role,
    logGroup: createLogGroup(scope, `${id}Logs`, props.logRetention),
    tracing: lambda.Tracing.ACTIVE,
  };
  const prebuiltBundle = join(repoRoot, prebuilt.bundleOf(props.handler));
  const fn = existsSync(prebuiltBundle)
    ? new lambda.Function(scope, id, {
        ...settings,
        code: lambda.Code.fromAsset(prebuiltBundle),
        handler: PREBUILT_HANDLER,
      })
    : new nodejs.NodejsFunction(scope, id, {
        ...settings,
        entry: join(repoRoot, props.handler),
        projectRoot: repoRoot,
        // npm-shrinkwrap.json, not package-lock.json: npm pack never ships the latter (docs/deploy.md).
        depsLockFilePath: join(repoRoot, 'npm-shrinkwrap.json'),
        bundling: { ...bundling, commandHooks: copyFilesHook(bundledFilesOf(props.handler)) },
      });
  tagHandler(fn, props.handler);
  acknowledgeFunctionFindings(fn);
  return fn;
}
