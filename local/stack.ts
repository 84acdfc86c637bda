import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '#core/ports.ts';
import { MASTER_KEY_PARAMETER } from '../lib/stacks/service-stack.ts';
import { createApiServer } from './api-gateway.ts';
import { startLocalDynamo } from './dynamodb.ts';
import { startLocalEventBridge } from './eventbridge.ts';
import { functionEnvironment } from './function-environment.ts';
import {
  iamAuthorizer,
  intrinsicResolver,
  LOCAL_ADMIN_CREDENTIALS,
  type LocalNames,
  localStateMachineArn,
  readPolicies,
} from './iam.ts';
import { localLambda } from './lambda-service.ts';
import type { Observer } from './observe.ts';
import { startLocalS3 } from './s3.ts';
import { startLocalStepFunctions } from './stepfunctions.ts';
import { type LocalFunction, readAssemblyTemplates, readTopology } from './template.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const LOCAL_TABLE = 'photo-jobs-local';
export const LOCAL_BUCKET = 'photo-jobs-local';
const LOCAL_EVENT_BUS = 'photo-jobs-local';
const DEFAULT_FUNCTION_INSTANCES = 16;
/**
 * Step Functions retry waits are multiplied by this unless told otherwise: the webhook schedule, hours in
 * AWS, takes under a minute here (30 s becomes 30 ms, 4 h becomes 14.4 s).
 */
const DEFAULT_RETRY_INTERVAL_SCALE = 0.001;
const STACK_FILE = 'local-stack.json';
const SWEEPER_HANDLER = 'functions/scheduled/sweep-stuck/handler.ts';
const SWEEP_EVERY_MS = 60_000;

export interface LocalStackOptions {
  port: number;
  /** The address the API listens on; default 127.0.0.1 (this machine only). */
  host?: string;
  /** Persistent data (DynamoDB, S3); `undefined` keeps everything in memory. */
  dataDir?: string;
  masterKeySha256: string;
  inferenceWorkers?: number;
  /**
   * Invocations of one zip function that run at once, as that many warm Lambda instances would; more wait
   * their turn before their clock starts. Default DEFAULT_FUNCTION_INSTANCES.
   */
  functionInstances?: number;
  /** Shortens Step Functions retry waits and Wait states (0..1); tests use 0. Default DEFAULT_RETRY_INTERVAL_SCALE. */
  retryIntervalScale?: number;
  /** Runs every task of an Express execution twice (local/stepfunctions.ts): a test of the steps' effects. */
  repeatExpressTasks?: boolean;
  /** Where job events (EventBridge PutEvents) are appended as JSON lines; default `<dataDir or tmp>/events.jsonl`. */
  eventsLogFile?: string;
  env?: Record<string, string>;
  /**
   * Run what would be deployed: the synth bundles every zip function with esbuild exactly as `cdk deploy`
   * does, the inference handler is bundled as its image does (functions/inference/bundle.ts), and those
   * bundles run instead of the TypeScript sources. Starting takes the bundling time (about a minute).
   */
  bundled?: boolean;
  /**
   * A cloud assembly already synthesized without bundling (`synthesizeTemplates({ bundle: false, outdir })`
   * of lib/app.ts): its templates are read instead of synthesizing the app again, which saves the seconds
   * of loading aws-cdk-lib and synthesizing at each start. Only for an assembly of these very sources; the
   * test servers use one kept under a hash of them (test/support/assembly.ts). Ignored with `bundled`.
   */
  assemblyDir?: string;
  /**
   * A module (repo-relative or absolute) whose `handler` the container-image function runs instead of the
   * template's, as a Lambda would run another image: the test servers whose subject is the API, not
   * vision, name test/support/marker-inference.ts. Ignored with `bundled`, which runs what would deploy.
   */
  inferenceHandler?: string;
  /** The share (0..1) of overlapping DynamoDB transactions cancelled with TransactionConflict; default 0. */
  transactionConflicts?: number;
  /**
   * IAM enforced on the stand-ins: each function calls them as its role, with the policies of the
   * synthesized template (local/iam.ts). Default on, unless the environment says LOCAL_IAM=off.
   */
  iam?: boolean;
  /** Changes the synthesized templates before the stack reads them (tests remove a grant with it). */
  transformTemplates?: (templates: { data: object; service: object }) => void;
  /**
   * The time the bucket's lifecycle rules are applied by (local/clock.ts moves it, with the handlers'); default
   * the machine's.
   */
  clock?: Clock;
  /**
   * Told of every request a stand-in answers and every function invocation (local/observe.ts), in this
   * process: `npm run cost -- trace` counts one job's with it.
   */
  observe?: Observer;
}

export interface LocalStack {
  baseUrl: string;
  /** `stateMachines`: the job and archive workflows' ARNs, for a reader that asks what runs. */
  endpoints: { dynamodb: string; s3: string; sfn: string; stateMachines: string[] };
  /** The job events published so far, one JSON object a line. */
  eventsLogFile: string;
  close(): Promise<void>;
}

/** The bytes of a Lambda proxy event's or answer's body. */
function bodyBytes(message: unknown): number {
  const { body, isBase64Encoded } = (message ?? {}) as { body?: unknown; isBase64Encoded?: boolean };
  if (typeof body !== 'string') return 0;
  return Buffer.byteLength(body, isBase64Encoded ? 'base64' : 'utf8');
}

/** Where a running stack publishes its endpoints, so `npm run cli` can reach the same data. */
export async function readRunningStack(dataDir: string): Promise<LocalStack['endpoints'] | null> {
  try {
    const info = JSON.parse(await readFile(path.join(dataDir, STACK_FILE), 'utf8'));
    process.kill(info.pid, 0);
    return info.endpoints;
  } catch {
    return null;
  }
}

/**
 * The whole service on one machine: the CDK app is synthesized, and its template decides the
 * tables, routes, functions and state machine that run here over DynamoDB, S3 and Step Functions
 * stand-ins reached through the real AWS SDK clients.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  // Under the repository, so that the inference bundle finds sharp and onnxruntime-node in node_modules
  // as it does in its image.
  const bundleDir = options.bundled
    ? await mkdir(path.join(REPO_ROOT, '.cache'), { recursive: true }).then(() =>
        mkdtemp(path.join(REPO_ROOT, '.cache', 'bundled-')),
      )
    : undefined;
  const assemblyDir = bundleDir && path.join(bundleDir, 'cdk.out');
  const templates =
    options.assemblyDir && !bundleDir
      ? await readAssemblyTemplates(options.assemblyDir)
      : (await import('../lib/app.ts')).synthesizeTemplates({
          bundle: Boolean(bundleDir),
          outdir: assemblyDir,
        });
  options.transformTemplates?.(templates);
  const topology = readTopology([templates.data, templates.service], () => LOCAL_TABLE);
  // The local names of the template's resources; a state machine keeps the name the app gives it, as the
  // policies that grant on it by ARN name it.
  const names: LocalNames = {
    table: () => LOCAL_TABLE,
    bucket: () => LOCAL_BUCKET,
    eventBus: () => LOCAL_EVENT_BUS,
    stateMachine: (logicalId, resource) => resource.Properties?.StateMachineName ?? logicalId,
  };
  const policies = readPolicies([templates.data, templates.service], names);
  const authorizer = iamAuthorizer(policies);
  const enforced = options.iam ?? process.env.LOCAL_IAM !== 'off';
  const authorize = enforced ? authorizer : async () => null;
  // Told apart by their first state, which the constructs name (logical ids move with the construct tree).
  const machineStartingAt = (state: string) => {
    const found = topology.stateMachines.find((machine) => machine.definition.StartAt === state);
    if (!found) throw new Error(`The CDK app defines no state machine starting at ${state}`);
    return { ...found, arn: localStateMachineArn(found.name ?? found.logicalId) };
  };
  const stateMachine = machineStartingAt('PrepareJob');
  const archiveMachine = machineStartingAt('RunArchiveTask');
  const stateMachineArn = stateMachine.arn;

  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const dir = (name: string) => (options.dataDir ? path.join(options.dataDir, name) : undefined);
  const dynamo = await startLocalDynamo({
    dataDir: dir('dynamodb'),
    tables: topology.tables,
    transactionConflicts: options.transactionConflicts,
    authorize,
    observe: options.observe,
  });
  const s3 = await startLocalS3({
    dataDir: dir('s3'),
    buckets: [LOCAL_BUCKET],
    iam: { authorize, accessKeyIds: [...policies.identities.keys()] },
    lifecycle: { rules: topology.lifecycle, clock: options.clock },
    observe: options.observe,
  });
  const eventBus = await startLocalEventBridge({
    authorize,
    observe: options.observe,
    logFile:
      options.eventsLogFile ??
      path.join(options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'photo-jobs-'))), 'events.jsonl'),
  });

  // The process's own environment: what the stack and callers outside any function (the CLI's use cases,
  // a test seeding data) read. Each function reads its own instead (environmentOf, below).
  Object.assign(process.env, {
    TABLE_NAME: LOCAL_TABLE,
    BUCKET_NAME: LOCAL_BUCKET,
    // Callers outside any function sign as the stand-ins' admin; each function as its role.
    AWS_ACCESS_KEY_ID: LOCAL_ADMIN_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_ADMIN_CREDENTIALS.secretAccessKey,
    STATE_MACHINE_ARN: stateMachineArn,
    ARCHIVE_STATE_MACHINE_ARN: archiveMachine.arn,
    AWS_REGION: 'us-east-1',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    S3_ENDPOINT: s3.endpoint,
    EVENTBRIDGE_ENDPOINT: eventBus.endpoint,
    EVENT_BUS_NAME: LOCAL_EVENT_BUS,
    MASTER_KEY_SHA256: options.masterKeySha256,
    // Logs: one human line per entry on a terminal, else (and with LOG_FORMAT=json) Lambda's JSON lines.
    // Read here, in the main thread: the inference workers' stdout is never a terminal.
    LOG_FORMAT: process.env.LOG_FORMAT || (process.stdout.isTTY ? 'text' : 'json'),
    // Powertools, as on a developer's machine: no EMF lines on stdout, and no tracer (which would
    // otherwise look for an X-Ray daemon).
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_TRACE_ENABLED: 'false',
    // Invocations of one function overlap here, as on a Lambda instance serving several at once: the runtime
    // keeps each one's state apart (lambda-runtime.ts).
    AWS_LAMBDA_MAX_CONCURRENCY: String(options.functionInstances ?? DEFAULT_FUNCTION_INSTANCES),
    ...options.env,
  });

  const resolver = intrinsicResolver([templates.data, templates.service], names, {
    // As `cdk deploy --parameters` would give it.
    [MASTER_KEY_PARAMETER]: options.masterKeySha256,
  });
  const environments = new Map<string, Record<string, string>>();
  /** Made at a function's first use (or at start, below), when every stand-in listens. */
  const environmentOf = (fn: LocalFunction): Record<string, string> => {
    let environment = environments.get(fn.logicalId);
    if (!environment) {
      environment = functionEnvironment(fn, resolver.resolve, process.env, options.env);
      environments.set(fn.logicalId, environment);
    }
    return environment;
  };

  const lambda = await localLambda({
    repoRoot: REPO_ROOT,
    functions: topology.functions,
    environmentOf,
    ...(bundleDir && assemblyDir ? { bundled: { dir: bundleDir, assemblyDir } } : {}),
    inferenceHandler: options.inferenceHandler,
    inferenceWorkers: options.inferenceWorkers,
    functionInstances: options.functionInstances ?? DEFAULT_FUNCTION_INSTANCES,
    observe: options.observe,
  });
  const invokeFunction = lambda.invoke;
  const observe = options.observe;

  // A task that starts another machine names it by Ref, which the template reader leaves as its logical id.
  const machineArns = new Map(
    topology.stateMachines.map((machine) => [
      machine.logicalId,
      localStateMachineArn(machine.name ?? machine.logicalId),
    ]),
  );
  const withMachineArns = (definition: object) =>
    JSON.parse(
      JSON.stringify(definition).replace(/"StateMachineArn":"([^"]+)"/g, (whole, id: string) =>
        machineArns.has(id) ? `"StateMachineArn":"${machineArns.get(id)}"` : whole,
      ),
    );
  const sfn = await startLocalStepFunctions({
    stateMachines: Object.fromEntries(
      topology.stateMachines.map((machine) => [
        machineArns.get(machine.logicalId)!,
        withMachineArns(machine.definition),
      ]),
    ),
    types: Object.fromEntries(
      topology.stateMachines.map((machine) => [machineArns.get(machine.logicalId)!, machine.type]),
    ),
    ...(options.repeatExpressTasks ? { repeatExpressTasks: true } : {}),
    retryIntervalScale: options.retryIntervalScale ?? DEFAULT_RETRY_INTERVAL_SCALE,
    stateFile: dir('stepfunctions/executions.jsonl'),
    invoke: (resourceArn, payload, started) =>
      invokeFunction(resourceArn.split(':').pop()!, payload, started),
    authorize,
    observe,
  });
  process.env.SFN_ENDPOINT = sfn.endpoint;
  // Every stand-in listens now: each function's environment is made, so that a variable the stack cannot
  // resolve stops the start rather than a request.
  for (const fn of topology.functions.values()) environmentOf(fn);
  sfn.resume();

  // The sweeper of stuck work runs at start and every minute here (every 5 minutes in AWS).
  const sweeperFunction = [...topology.functions.values()].find((fn) => fn.handler === SWEEPER_HANDLER);
  const sweep = async () => {
    if (!sweeperFunction) return;
    try {
      await invokeFunction(sweeperFunction.logicalId, {});
    } catch (error) {
      console.error(`[sweeper] ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  let sweeping: Promise<void> = sweep();
  const sweepTimer = setInterval(() => {
    sweeping = sweeping.then(sweep);
  }, SWEEP_EVERY_MS);
  sweepTimer.unref();

  const server = createApiServer(
    topology.routes.map((route) => ({
      routeKey: route.routeKey,
      invoke: !observe
        ? (event) => invokeFunction(route.functionId, event)
        : async (event) => {
            const result = await invokeFunction(route.functionId, event);
            observe({
              service: 'apigateway',
              routeKey: route.routeKey,
              function: route.functionId,
              requestBytes: bodyBytes(event),
              responseBytes: bodyBytes(result),
            });
            return result;
          },
      ...(route.timeoutMs ? { timeoutMs: route.timeoutMs } : {}),
    })),
    { cors: topology.cors, throttle: topology.throttle },
  );
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    // The stand-ins already listen: a port clash must not leave them running with nothing in front.
    await Promise.allSettled([sfn.close(), lambda.close(), eventBus.close(), s3.close(), dynamo.close()]);
    clearInterval(sweepTimer);
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const endpoints = {
    dynamodb: dynamo.endpoint,
    s3: s3.endpoint,
    sfn: sfn.endpoint,
    stateMachines: [stateMachineArn, archiveMachine.arn],
  };
  if (options.dataDir) {
    await writeFile(
      path.join(options.dataDir, STACK_FILE),
      JSON.stringify({ pid: process.pid, port, endpoints }),
    );
  }

  return {
    // A wildcard address is reached on this machine at loopback.
    baseUrl: `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}/api/v1`,
    endpoints,
    eventsLogFile: eventBus.logFile,
    async close() {
      clearInterval(sweepTimer);
      await sweeping;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      // The executions are stopped first (synchronously, unrecorded, so that they resume after a restart);
      // then the pool drops what it runs and queues, so that nothing waits for a backlog of inference.
      const executionsStopped = sfn.close();
      await lambda.close();
      await executionsStopped;
      await eventBus.close();
      await s3.close();
      await dynamo.close();
      if (options.dataDir) await rm(path.join(options.dataDir, STACK_FILE), { force: true });
      if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
    },
  };
}
