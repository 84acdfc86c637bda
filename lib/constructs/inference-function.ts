import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Size } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { inference, inferenceContextExcludes, prebuilt, repoRoot } from '../config.ts';
import { inferenceObjectAccess } from './bucket-access.ts';
import { acknowledgeFunctionFindings, tagHandler } from './handler-function.ts';
import { createLogGroup } from './log-group.ts';
import type { ServiceContext } from './task-functions.ts';
import { functionTracing } from './tracing.ts';

export interface InferenceProps {
  /** MiB; default `inference.memoryMiB` of lib/config.ts (2,560: the peak RSS at the largest photo, plus a margin). */
  memorySize?: number;
  /** Default ARM_64; the image is built for the same platform. */
  architecture?: lambda.Architecture;
  /**
   * Reserved concurrency: the most inference runs at once, kept apart from what the API needs. Default
   * `inference.reservedConcurrency` in lib/config.ts; `null` reserves nothing (an account whose quota
   * is under 100 plus this cannot reserve any: docs/deploy.md).
   */
  reservedConcurrency?: number | null;
  /**
   * A mirror the image build fetches the model files from (`<base>/<file name>`, https) instead of their
   * official hosts, passed as the Dockerfile's MODELS_BASE_URL build argument. Default: MODELS_BASE_URL
   * in the environment of the synth, else none (the official hosts).
   */
  modelsBaseUrl?: string;
}

/**
 * The inference function (container image). It handles untrusted images: no table, and only the object
 * prefixes it reads and writes (inferenceObjectAccess).
 */
export function createInferenceFunction(ctx: ServiceContext, props: InferenceProps = {}) {
  const architecture = props.architecture ?? lambda.Architecture.ARM_64;
  // Only when set: a build argument is part of the asset's hash, and an empty one changes nothing.
  const modelsBaseUrl = props.modelsBaseUrl ?? (process.env.MODELS_BASE_URL || undefined);
  // The construct package carries the context as CDK staged it from this repository (config.ts `prebuilt`).
  const prebuiltContext = join(repoRoot, prebuilt.inferenceContext);
  const context = existsSync(prebuiltContext) ? prebuiltContext : repoRoot;
  const tracing = functionTracing(ctx.tracing);
  const fn = new lambda.DockerImageFunction(ctx.scope, 'Inference', {
    code: lambda.DockerImageCode.fromImageAsset(context, {
      file: inference.dockerfile,
      exclude: [...inferenceContextExcludes],
      buildArgs: modelsBaseUrl ? { MODELS_BASE_URL: modelsBaseUrl } : undefined,
      platform: architecture === lambda.Architecture.X86_64 ? Platform.LINUX_AMD64 : Platform.LINUX_ARM64,
    }),
    architecture,
    memorySize: props.memorySize ?? inference.memoryMiB,
    timeout: Duration.seconds(inference.timeoutSeconds),
    ephemeralStorageSize: Size.gibibytes(inference.ephemeralStorageGiB),
    environment: {
      ...ctx.common,
      ...inference.processEnvironment,
      BUCKET_NAME: ctx.data.bucket.bucketName,
      MODELS_DIR: inference.modelsDir,
      ...tracing.environment,
    },
    logGroup: createLogGroup(ctx.scope, 'InferenceLogs', ctx.logRetention),
    tracing: tracing.tracing,
    reservedConcurrentExecutions:
      props.reservedConcurrency === null
        ? undefined
        : (props.reservedConcurrency ?? inference.reservedConcurrency),
  });
  tagHandler(fn, inference.handler);
  acknowledgeFunctionFindings(fn);
  ctx.data.grantObjects(fn, ['s3:GetObject'], inferenceObjectAccess.read);
  ctx.data.grantObjects(fn, ['s3:PutObject'], inferenceObjectAccess.write);
  ctx.data.grantBucketKey(fn);
  return fn;
}
