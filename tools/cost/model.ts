/**
 * The cost model: from the template's facts, one traced job, the bench's figures, the estimates and the
 * price table to dollars per job, by service. Pure: every input is an argument.
 */
import type { Operation } from '#core/jobs/operations.ts';
import { STORAGE_PREFIXES } from '#core/storage-layout.ts';
import type { ESTIMATES } from './estimates.ts';
import type { Prices } from './prices.ts';
import type { TemplateFacts } from './template-facts.ts';

/** What one traced job did, in one of its phases. */
export interface TracedPhase {
  /** Invocations by function logical id, with their summed local run time. */
  invocations: Record<string, { count: number; totalMs: number }>;
  /** Each API request: its body's bytes and its answer's. */
  apiRequests: Array<{ route: string; requestBytes: number; responseBytes: number }>;
  /** AWS calls by `service:Operation` (s3:GetObject, dynamodb:TransactWriteItems, ...). */
  calls: Record<string, number>;
  writeUnits: number;
  readUnits: number;
  /** Objects written, by key prefix: copies of the photo, of the job's result files, and other bytes. */
  stored: Record<string, { photos: number; results: number; otherBytes: number }>;
  /** S3 GETs of a presigned URL: the client downloading a result. */
  downloads: number;
  /** Each EventBridge entry's bytes. */
  eventBytes: number[];
  /** The functions' own log output (Powertools' JSON lines, EMF included). */
  logBytes: number;
}

/** A phase in which nothing happened. */
export const emptyPhase = (): TracedPhase => ({
  invocations: {},
  apiRequests: [],
  calls: {},
  writeUnits: 0,
  readUnits: 0,
  stored: {},
  downloads: 0,
  eventBytes: [],
  logBytes: 0,
});

export const PHASES = ['create', 'poll', 'workflow', 'download'] as const;
export type Phase = (typeof PHASES)[number];

export interface TracedOperation {
  /** The photo the traced job sent (a small marker photo: the bench's photo stands in for it here). */
  photoBytes: number;
  /** GET /jobs/{id} the traced client made; the poll phase holds all of them. */
  polls: number;
  phases: Record<Phase, TracedPhase>;
}

/** The facts a trace ran under: when the template's differ, the trace is stale (test/infra/cost.test.ts). */
type TracedUnder = ReturnType<typeof tracedUnder>;

/** What of the template a trace's counts depend on. */
export function tracedUnder(facts: TemplateFacts) {
  return {
    successPath: facts.jobWorkflow.successPath.map((state) => state.name),
    functionLogLevels: [...new Set(Object.values(facts.functions).map((fn) => fn.logLevel))].sort(),
    table: facts.table,
  };
}

export interface Trace {
  traced: string;
  command: string;
  under: TracedUnder;
  operations: Record<Operation, TracedOperation>;
}

/** The bench's figures for one operation (test/bench/run.ts `--json`). */
export interface BenchFigures {
  p50Ms: number;
  sourceBytes: number;
  /** Every file the operation wrote; `urlBytes` the one behind the job's `url`. */
  filesBytes: number;
  urlBytes: number;
}

/** When, how and where a block of bench figures was measured. */
export interface BenchStamp {
  measured: string;
  command: string;
  host: string;
  loadAverage: { before: number; after: number };
  /** Where figures came from when not straight from `command`'s output. */
  source?: string;
}

/**
 * tools/cost/bench.json: sizes from the bench's last run; run times from its last run on a quiet machine
 * (test/bench/run.ts keeps them otherwise).
 */
export interface Bench {
  sizes: BenchStamp & { operations: Record<Operation, Omit<BenchFigures, 'p50Ms'>> };
  durations: BenchStamp & { operations: Record<Operation, Pick<BenchFigures, 'p50Ms'>> };
}

/** One operation's figures, both blocks together. */
export const benchFigures = (bench: Bench, operation: Operation): BenchFigures => ({
  ...bench.sizes.operations[operation],
  ...bench.durations.operations[operation],
});

export const SERVICES = [
  'Step Functions',
  'Lambda: inference',
  'Lambda: API and workflow tasks',
  'API Gateway',
  'DynamoDB',
  'S3 requests',
  'S3 storage',
  'data out',
  'X-Ray',
  'CloudWatch Logs',
  'EventBridge',
] as const;
export type Service = (typeof SERVICES)[number];

export interface ModelInputs {
  facts: TemplateFacts;
  traced: TracedOperation;
  bench: BenchFigures;
  /** How the client waits between polls (client/index.ts `JOB_POLLING`). */
  polling: { firstDelayMs: number; factor: number; maxDelayMs: number };
  prices: Prices;
  estimates: typeof ESTIMATES;
}

const GB = 2 ** 30;

/** The inference function's run time at `memoryMb`, from the bench's (its CPU share, ESTIMATES). */
export function inferenceMsAt(
  benchMs: number,
  memoryMb: number,
  estimates: Pick<typeof ESTIMATES, 'lambdaMbPerVcpu' | 'benchVcpus'>,
): number {
  const vcpus = Math.min(estimates.benchVcpus, memoryMb / estimates.lambdaMbPerVcpu);
  return (benchMs * estimates.benchVcpus) / vcpus;
}

/** The bench's figures with the inference run time it would take at the template's memory. */
export function atTemplateMemory(
  facts: TemplateFacts,
  bench: BenchFigures,
  estimates: ModelInputs['estimates'],
): BenchFigures {
  const memoryMb = facts.functions[facts.inferenceFunction]!.memoryMb;
  return { ...bench, p50Ms: inferenceMsAt(bench.p50Ms, memoryMb, estimates) };
}

/** Dollars per job, by service. */
export function jobCost(inputs: ModelInputs): Record<Service, number> {
  const { facts, traced, prices, estimates } = inputs;
  const bench = atTemplateMemory(facts, inputs.bench, estimates);
  const inference = facts.inferenceFunction;
  const phases = traced.phases;

  const durationMs = (fn: string, phase: TracedPhase) => meanMs(fn, phase, inference, bench);
  const workMs = workflowMs(inference, traced, bench);
  const polls = pollsFor(workMs, inputs.polling);
  /** How many times each phase happens in one job. */
  const times: Record<Phase, number> = {
    create: 1,
    poll: polls / traced.polls,
    workflow: 1,
    download: 1,
  };
  const perJob = (of: (phase: TracedPhase, name: Phase) => number) =>
    Object.entries(phases).reduce(
      (sum, [name, phase]) => sum + of(phase, name as Phase) * times[name as Phase],
      0,
    );

  const lambda = (only: 'inference' | 'others') =>
    perJob((phase) =>
      Object.entries(phase.invocations)
        .filter(([fn]) => (fn === inference) === (only === 'inference'))
        .reduce((sum, [fn, { count }]) => {
          const { memoryMb, architecture } = facts.functions[fn]!;
          const gbSeconds = (memoryMb / 1024) * (Math.ceil(durationMs(fn, phase)) / 1000);
          return sum + count * (prices.lambda.request + gbSeconds * prices.lambda.gbSecond[architecture]);
        }, 0),
    );

  const workflow = facts.jobWorkflow;
  const stepFunctions =
    workflow.type === 'STANDARD'
      ? workflow.successPath.length * prices.stepFunctions.standardTransition
      : prices.stepFunctions.expressRequest +
        ((Math.ceil(workMs / prices.stepFunctions.expressBilledMs) * prices.stepFunctions.expressBilledMs) /
          1000) *
          ((Math.ceil(estimates.expressMemoryMb / prices.stepFunctions.expressMemoryChunkMb) *
            prices.stepFunctions.expressMemoryChunkMb) /
            1024) *
          prices.stepFunctions.expressGbSecond;

  /** The photo in a request body is the bench's, not the traced marker photo. */
  const requestBytes = (bytes: number) =>
    bytes >= traced.photoBytes ? bytes - traced.photoBytes + bench.sourceBytes : bytes;
  const apiGateway = perJob((phase) =>
    phase.apiRequests.reduce(
      (sum, request) =>
        sum +
        Math.max(1, Math.ceil(requestBytes(request.requestBytes) / prices.apiGateway.httpMeteredBytes)) *
          prices.apiGateway.httpRequest,
      0,
    ),
  );

  const dynamodb = perJob(
    (phase) => phase.writeUnits * prices.dynamodb.writeUnit + phase.readUnits * prices.dynamodb.readUnit,
  );

  const s3Requests = perJob((phase) =>
    Object.entries(phase.calls)
      .filter(([call]) => call.startsWith('s3:'))
      .reduce((sum, [call, count]) => sum + count * s3RequestPrice(call.slice(3), prices), 0),
  );

  const storage = perJob((phase) =>
    Object.entries(phase.stored).reduce((sum, [prefix, stored]) => {
      const days = facts.expiryDays[prefix];
      if (days === undefined)
        throw new Error(`objects under ${prefix} never expire: the model has no lifetime for them`);
      const bytes = stored.photos * bench.sourceBytes + stored.results * bench.filesBytes + stored.otherBytes;
      const months = (days + estimates.expiryRoundingDays) / estimates.daysPerMonth;
      return sum + (bytes / GB) * months * prices.s3.gbMonth;
    }, 0),
  );

  const dataOut = perJob(
    (phase) =>
      ((phase.downloads * bench.urlBytes +
        phase.apiRequests.reduce((sum, request) => sum + request.responseBytes, 0)) /
        GB) *
      prices.dataOutGb,
  );

  const apiFunctions = (phase: TracedPhase) => phase.apiRequests.length;
  const tracedInvocations = (phase: TracedPhase) =>
    Object.entries(phase.invocations)
      .filter(([fn]) => facts.functions[fn]!.tracing)
      .reduce((sum, [, { count }]) => sum + count, 0);
  // HTTP APIs do not trace: each traced API function starts a trace of its own. A traced state machine
  // records one trace for the execution, its tasks' segments in it; untraced, each traced task starts one.
  const traces = perJob((phase, name) =>
    name === 'workflow'
      ? workflow.tracing
        ? 1
        : tracedInvocations(phase)
      : Math.min(apiFunctions(phase), tracedInvocations(phase)),
  );
  const xray = traces * estimates.xraySampledShare * prices.xrayTrace;

  const logBytes =
    perJob((phase) => {
      const invocations = Object.values(phase.invocations).reduce((sum, { count }) => sum + count, 0);
      return (
        phase.logBytes +
        invocations * estimates.lambdaPlatformLogBytes +
        phase.apiRequests.length * (facts.accessLogFormatBytes ?? 0)
      );
    }) +
    executionLogEvents(workflow.successPath, workflow.logLevel) * estimates.stepFunctionsLogEventBytes;
  const logs = (logBytes / GB) * prices.logsIngestedGb;

  const eventBridge = perJob((phase) =>
    phase.eventBytes.reduce(
      (sum, bytes) =>
        sum + Math.max(1, Math.ceil(bytes / prices.eventBridge.chunkBytes)) * prices.eventBridge.event,
      0,
    ),
  );

  return {
    'Step Functions': stepFunctions,
    'Lambda: inference': lambda('inference'),
    'Lambda: API and workflow tasks': lambda('others'),
    'API Gateway': apiGateway,
    DynamoDB: dynamodb,
    'S3 requests': s3Requests,
    'S3 storage': storage,
    'data out': dataOut,
    'X-Ray': xray,
    'CloudWatch Logs': logs,
    EventBridge: eventBridge,
  };
}

/**
 * What a job costs beyond what the photo itself needs (issue 37): everything but the inference function's
 * run, the result's transfer to the client and one stored copy of its files for as long as results live.
 */
export function overhead(
  cost: Record<Service, number>,
  inputs: Pick<ModelInputs, 'facts' | 'bench' | 'prices' | 'estimates'>,
): number {
  const total = SERVICES.reduce((sum, service) => sum + cost[service], 0);
  return total - cost['Lambda: inference'] - cost['data out'] - resultCopyCost(inputs);
}

/** One copy of a job's result files, stored under results/ until they expire. */
function resultCopyCost({
  facts,
  bench,
  prices,
  estimates,
}: Pick<ModelInputs, 'facts' | 'bench' | 'prices' | 'estimates'>): number {
  const days = facts.expiryDays[STORAGE_PREFIXES.results.prefix];
  if (days === undefined) throw new Error('results never expire: the model has no lifetime for them');
  const months = (days + estimates.expiryRoundingDays) / estimates.daysPerMonth;
  return (bench.filesBytes / GB) * months * prices.s3.gbMonth;
}

/** Mean run time of a function's invocations in a phase; the inference function's is the bench's p50. */
function meanMs(fn: string, phase: TracedPhase, inference: string, bench: BenchFigures): number {
  return fn === inference ? bench.p50Ms : phase.invocations[fn]!.totalMs / phase.invocations[fn]!.count;
}

/**
 * How long a job's workflow runs: every task's run, one after the other. The job reads `success` before the
 * last task (the webhook's delivery) ends, so this is a little more than a polling client waits.
 */
export function workflowMs(inference: string, traced: TracedOperation, bench: BenchFigures): number {
  const work = traced.phases.workflow;
  return Object.entries(work.invocations).reduce(
    (sum, [fn, { count }]) => sum + meanMs(fn, work, inference, bench) * count,
    0,
  );
}

/** GET /jobs/{id} a client following `polling` makes for a job that takes `jobMs`: one at once, then after each wait. */
export function pollsFor(jobMs: number, polling: ModelInputs['polling']): number {
  let polls = 1;
  let at = 0;
  for (
    let delay = polling.firstDelayMs;
    at < jobMs;
    delay = Math.min(delay * polling.factor, polling.maxDelayMs)
  ) {
    at += delay;
    polls++;
  }
  return polls;
}

const FREE_S3 = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);
const TIER1_S3 =
  /^(PutObject|CopyObject|PostObject|UploadPart|UploadPartCopy|CreateMultipartUpload|CompleteMultipartUpload|List\w+)$/;

export function s3RequestPrice(operation: string, prices: Prices): number {
  if (FREE_S3.has(operation)) return 0;
  return TIER1_S3.test(operation) ? prices.s3.tier1Request : prices.s3.tier2Request;
}

/**
 * History events a successful execution logs at `level`: ExecutionStarted and ExecutionSucceeded; each Task
 * entered, scheduled, started, succeeded and exited; any other state entered and exited. Only ALL logs them:
 * ERROR and FATAL log failures, OFF nothing.
 */
export function executionLogEvents(path: Array<{ type: string }>, level: string): number {
  if (level !== 'ALL') return 0;
  return 2 + path.reduce((sum, state) => sum + (state.type === 'Task' ? 5 : 2), 0);
}
