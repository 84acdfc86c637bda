import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { methodsOf, pageHandler, pageRoutes, routes } from '../functions/api/route-table.ts';
import { errorNames, LAMBDA_THROTTLED } from '../layers/core/error-names.ts';
import { STORAGE_PREFIXES, TABLE_INDEXES } from '../layers/core/storage-layout.ts';
import { JOB_RUN_LIMIT_SECONDS } from '../layers/core/use-cases/sweep-stuck.ts';
import { WEBHOOK_RETRY_SCHEDULE } from '../layers/core/webhooks/retry-schedule.ts';

/** Absolute path of the repository root; handler paths below are relative to it. */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export const stackNames = {
  data: 'PhotoJobsData',
  service: 'PhotoJobsService',
} as const;

/**
 * The route table (every route under `/api/v1` and the static pages) lives beside the endpoints' own
 * statements, so that the `$default` route's function reads the very table the routes are made from.
 */
export { methodsOf, pageHandler, pageRoutes, routes };

/** The `$default` route's function: an unknown path is 404, a known one with another method 405 with `Allow`. */
export const noRouteFunction = {
  handler: 'functions/api/no-route/handler.ts',
  memoryMiB: 256,
  // It reads no body and calls nothing: a second is already generous.
  timeoutSeconds: 5,
} as const;

/**
 * Files a function reads at run time, copied beside its bundle when it is built from the sources (source
 * repo-relative or absolute, target bundle-relative): the pages and the two swagger-ui files they load
 * (layers/http/static-pages.ts finds them there). A function, so that swagger-ui-dist is looked up only
 * where a bundle is built: the construct package carries the bundles built already, without it.
 */
export function bundledFilesOf(handler: string): ReadonlyArray<{ from: string; to: string }> {
  if (handler !== pageHandler) return [];
  // Found as Node finds it, wherever the installer put it.
  const swaggerUiDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return [
    { from: 'web', to: 'web' },
    {
      from: join(swaggerUiDist, 'swagger-ui-bundle.js'),
      to: 'vendor/swagger-ui/swagger-ui-bundle.js',
    },
    { from: join(swaggerUiDist, 'swagger-ui.css'), to: 'vendor/swagger-ui/swagger-ui.css' },
  ];
}

/**
 * What the construct package (bin/packages.ts) carries instead of sources, by path in the package: each
 * zip function's bundle as CDK built it from this repository (`<handler folder>.zip`), and the inference
 * image's build context as CDK staged it. A clone of the repository has no such folder and builds both at
 * synth.
 */
export const prebuilt = {
  bundleOf: (handler: string) => join('prebuilt', 'functions', `${dirname(handler)}.zip`),
  inferenceContext: join('prebuilt', 'inference-image'),
} as const;

export const workflowHandlers = {
  prepareJob: 'functions/workflow/prepare-job/handler.ts',
  settleJob: 'functions/workflow/settle-job/handler.ts',
  deliverWebhook: 'functions/workflow/deliver-webhook/handler.ts',
  batchArchive: 'functions/workflow/batch-archive/handler.ts',
} as const;

/** The sweeper of stuck work: a scheduled function, not a task of a state machine. */
export const sweeper = {
  handler: 'functions/scheduled/sweep-stuck/handler.ts',
  everyMinutes: 5,
  memoryMiB: 512,
  // A scan of the table and a few writes; a run that takes longer leaves the rest to the next one.
  timeoutSeconds: 120,
} as const;

/** The archive workflow's task: unpacking a 2 GB archive of 1,000 photos, or zipping their results. */
export const archiveFunction = {
  memoryMiB: 1024,
  timeoutSeconds: 900,
} as const;

/**
 * What the inference function's memory is sized from: the largest peak RSS of any operation on the largest
 * photo the API accepts (MAX_IMAGE_PIXELS at 4:3, 9239x6927): studio_background, 2,186 MB, by
 * `npm run bench -- --ours-only --largest --runs 1` (2026-11-28 04:10 UTC, 2 shared CPUs; background 1,743,
 * background_mask 1,246, plate 776, plate_mask 686, analyze 549 MB). One cold and one warm run per operation
 * on photos of a fixed pixel count: the margin covers what content and allocator timing move. Lambda gives
 * CPU in proportion to memory, and the bench's run times scaled by that share (tools/cost/estimates.ts)
 * cost the same GB-seconds at any size under two vCPUs, so the smallest size that holds the peak is also
 * the cheapest (`npm run cost` prints 1,769, 2,048, this and 3,008 MB side by side, docs/deploy.md); its
 * slowest warm run at that photo, background_mask's 50.7 s on the bench host, takes 70 s at its 1.45 vCPUs,
 * under the function's 120 s.
 */
const inferenceMemorySizing = { peakRssMiB: 2186, margin: 0.15, stepMiB: 64 } as const;

export const inference = {
  handler: 'functions/inference/handler.ts',
  dockerfile: 'functions/inference/Dockerfile',
  modelsDir: '/opt/models',
  memoryMiB:
    Math.ceil(
      (inferenceMemorySizing.peakRssMiB * (1 + inferenceMemorySizing.margin)) / inferenceMemorySizing.stepMiB,
    ) * inferenceMemorySizing.stepMiB,
  timeoutSeconds: 120,
  ephemeralStorageGiB: 2,
  /**
   * Read by glibc when the runtime process starts: two malloc arenas instead of one per thread keep freed
   * ISNet and image buffers from staying resident (docs/decisions/0024-inference-memory-and-threads.md).
   * `npm run bench` starts its rows of our operations with the same variables.
   */
  processEnvironment: { MALLOC_ARENA_MAX: '2' },
  /**
   * Lambda concurrency is one pool per account and region. Uncapped, a burst of jobs (20 in flight per
   * account, MAX_JOBS_IN_FLIGHT) takes every instance, and API calls are throttled (HTTP API answers 503).
   * Capped, the excess is throttled at the task instead, which waits and retries it (`throttleRetry`).
   */
  reservedConcurrency: 20,
  /**
   * The image's build context: the repository root minus everything but these paths, which are what the
   * Dockerfile COPYs (test/infra/dockerfile.test.ts checks each COPY source is under one, and
   * test/infra/image-build.test.ts builds from the context CDK stages with them). An allow-list, so that
   * edits elsewhere (infra, tests, docs, node_modules, cdk.out, .data, .git, .cache) neither slow down
   * fingerprinting at synth nor produce a new image. /.dockerignore holds the same rules (checked equal).
   */
  contextAllowList: [
    'package.json',
    'npm-shrinkwrap.json',
    'layers',
    'models',
    'bin/models.ts',
    'functions/inference',
    'functions/wiring',
  ],
} as const;

/** Docker ignore rules of the inference build context: everything, except the allow-list. */
export const inferenceContextExcludes: readonly string[] = [
  '*',
  ...inference.contextAllowList.map((path) => `!${path}`),
];

export const apiFunction = {
  memoryMiB: 512,
  // HTTP API gives up on an integration after 30 s; the function must finish (or fail) first.
  timeoutSeconds: 29,
} as const;

/**
 * Step Functions counts a Lambda task's time from the invoke, so it includes the function's init phase, which
 * the function's own timeout does not: up to 10 s (AWS Lambda execution environment lifecycle), most likely
 * on a container image's cold start. A task waits the function's timeout, that init, and a margin for the
 * invoke itself; a task timeout equal to the function's would end a slow cold run as States.Timeout while
 * the function goes on writing.
 */
const LAMBDA_INIT_LIMIT_SECONDS = 10;
const INVOKE_MARGIN_SECONDS = 10;
export const taskTimeoutSeconds = (functionTimeoutSeconds: number) =>
  functionTimeoutSeconds + LAMBDA_INIT_LIMIT_SECONDS + INVOKE_MARGIN_SECONDS;

export const workflowFunction = {
  memoryMiB: 512,
  // Database work, or one webhook attempt (WEBHOOK_TIMEOUT_MS, 10 s) with its bookkeeping.
  timeoutSeconds: 30,
} as const;

/** Metadata key on every Lambda resource naming its repo-relative entry file; the local server reads it. */
export const handlerMetadataKey = 'photo-jobs:handler';

export const table = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: TABLE_INDEXES.gsi1,
  active: TABLE_INDEXES.active,
  ttlAttribute: 'ttl',
} as const;

/** Key prefixes in the bucket and how long objects under each live. */
/** The bucket's prefixes and their lifetimes: owned by the code's storage layout, read here for the bucket. */
export const bucketPrefixes = STORAGE_PREFIXES;

export const abortIncompleteUploadsAfterDays = 1;

export const workflow = {
  /**
   * The execution's limit. The job's own work is bounded far below it by the task timeouts and retries
   * (minutes); what needs the room is the webhook schedule after settlement (about 11 hours at most).
   */
  timeoutHours: 24,
  /** Express's own limit on an execution: the job's run (lib/constructs/job-workflow.ts). */
  expressTimeoutSeconds: JOB_RUN_LIMIT_SECONDS,
  /** PrepareJob, the settle tasks and the webhook tasks. */
  taskTimeoutSeconds: taskTimeoutSeconds(workflowFunction.timeoutSeconds),
  inferenceTaskTimeoutSeconds: taskTimeoutSeconds(inference.timeoutSeconds),
  /** Error names worth another attempt; `TransientError` is the domain's own (layers/core/error-names.ts). */
  retryErrors: [
    'Lambda.ServiceException',
    'Lambda.AWSLambdaException',
    'Lambda.SdkClientException',
    LAMBDA_THROTTLED,
    // The invoke's own HTTP call timed out (Step Functions' name for it): the function may not have run.
    'Lambda.ClientExecutionTimeoutException',
    errorNames.TransientError,
  ],
  retryIntervalSeconds: 2,
  retryMaxAttempts: 3,
  retryBackoffRate: 2,
} as const;

/**
 * RunInference throttled (its reserved concurrency in use): the function never started, so waiting is safe;
 * long enough for a burst of jobs to drain. Waits (full jitter, at most): 5, 10, 20, 40, 60 s, then 60 s;
 * about 13 minutes in all.
 */
const throttleRetry = {
  error: LAMBDA_THROTTLED,
  intervalSeconds: 5,
  backoffRate: 2,
  maxAttempts: 16,
  maxDelaySeconds: 60,
} as const;

/**
 * The same wait inside the job's Express run, which must end within five minutes with an inference run
 * (about two minutes at most) after it: waits of at most 5, 10, 20, 40, 60 s, about two minutes in all. A
 * job still throttled then fails (503, "too busy": layers/core/errors.ts) and its credits are released.
 */
export const expressThrottleRetry = { ...throttleRetry, maxAttempts: 5 } as const;

/**
 * When SettleFailure itself fails (after its retries), SettleLastResort tries the same settlement for
 * about two more hours on any error before the execution fails. Waits (full jitter, at most): 1, 2, 4, 8,
 * 16, 30, 30, 30 minutes.
 */
export const lastResortSettlement = {
  intervalSeconds: 60,
  backoffRate: 2,
  maxAttempts: 8,
  maxDelaySeconds: 30 * 60,
} as const;

/**
 * Webhook retries on `WebhookDeliveryError` (layers/core/webhooks/retry-schedule.ts): at most about 10 h 50
 * min in all. The local stack scales the waits (SFN_RETRY_INTERVAL_SCALE).
 */
export const webhookRetry = {
  error: errorNames.WebhookDeliveryError,
  ...WEBHOOK_RETRY_SCHEDULE,
} as const;
