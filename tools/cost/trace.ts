/**
 * `npm run cost -- trace`: one job of each operation on the embedded stack, counted where AWS would bill it.
 * The stack runs in this process with the template's Powertools settings (its log level, its metrics on), the
 * inference function on the marker runner (test/support/marker-vision.ts: the real pipeline without models,
 * so the calls are the service's and only the sizes and run time are not), and an observer on every stand-in
 * (local/observe.ts). The client is the project's own (client/index.ts), polling as it does. A job of each
 * operation runs first uncounted, so that every function is warm when its calls are counted.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dynamodbClient } from '#aws/clients.ts';
import { systemClock, tableAdapters } from '#aws/wiring.ts';
import { parseConfig } from '#config';
import { OPERATION_NAMES, type Operation } from '#core/jobs/operations.ts';
import { hashSecret } from '#core/keys/api-key.ts';
import { STORAGE_PREFIXES } from '#core/storage-layout.ts';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { createClient, type JobEnvelope } from '../../client/index.ts';
import { synthesizeTemplates } from '../../lib/app.ts';
import { ADMIN_ACCESS_KEY } from '../../local/iam.ts';
import type { StandInCall } from '../../local/observe.ts';
import { startLocalStack } from '../../local/stack.ts';
import { localRunningExecutions } from '../../local/stepfunctions.ts';
import { readAssemblyTemplates } from '../../local/template.ts';
import { markedPhoto } from '../../test/support/marker-vision.ts';
import { writeUnits } from './dynamodb-units.ts';
import {
  emptyPhase,
  PHASES,
  type Phase,
  type Trace,
  type TracedOperation,
  type TracedPhase,
  tracedUnder,
} from './model.ts';
import { type TemplateFacts, templateFacts } from './template-facts.ts';

const MARKER_INFERENCE = 'test/support/marker-inference.ts';
const LOCAL_CALLER = Symbol.for('photo-jobs.local.caller-access-key');
/** Calls that store an object's bytes as sent. */
const STORES = new Set(['PutObject', 'CopyObject']);

export async function traceJobs(): Promise<Trace> {
  const assemblyDir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-cost-'));
  try {
    synthesizeTemplates({ outdir: assemblyDir });
    const facts = templateFacts(await readAssemblyTemplates(assemblyDir));
    return await traceOn(assemblyDir, facts);
  } finally {
    await rm(assemblyDir, { recursive: true, force: true });
  }
}

async function traceOn(assemblyDir: string, facts: TemplateFacts): Promise<Trace> {
  const observed: StandInCall[] = [];
  const logs = new Map<string, number>();
  let recording = false;
  /** Which client step an API request came in, so that its function's work is counted in that phase. */
  let step: Phase = 'create';
  const phaseOf = new Map<string, Phase>();
  const stack = await startLocalStack({
    port: 0,
    masterKeySha256: hashSecret(randomBytes(24).toString('hex')),
    assemblyDir,
    inferenceHandler: MARKER_INFERENCE,
    inferenceWorkers: 1,
    retryIntervalScale: 0,
    env: { ...powertoolsEnvironment(facts), POWERTOOLS_METRICS_DISABLED: 'false', LOG_FORMAT: 'json' },
    observe(call) {
      if (!recording) return;
      if (call.service === 'apigateway') phaseOf.set(call.function, step);
      observed.push(call);
    },
  });
  const output = captureOutput(logs, facts.inferenceFunction, () => recording);
  let failed = true;
  try {
    const cfg = parseConfig(process.env);
    const table = tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) });
    const { key } = await createApiKey({ ...table, clock: systemClock }, { credits: 1000 });
    const client = createClient({ baseUrl: stack.baseUrl, apiKey: key });
    // Express executions are listed by no AWS call: the stand-in is asked directly.
    const idle = async () => {
      for (;;) {
        const { running, invoking } = await localRunningExecutions(stack.endpoints.sfn);
        if (running.length === 0 && invoking === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const runJob = async (operation: Operation, seed: number) => {
      const photo = await markedPhoto({ plate: true, seed });
      step = 'create';
      const created = (await client.createJob({ mode: operation, file: photo })) as JobEnvelope;
      step = 'poll';
      let polls = 0;
      const done = await client.waitForJob(created.id, { onProgress: () => polls++ });
      if (done.status !== 'success') throw new Error(`the traced ${operation} job ended ${done.status}`);
      step = 'download';
      if (done.url) await client.download(done.url);
      await idle();
      return { photoBytes: photo.length, polls };
    };

    // Other photos than the counted jobs' (markedPhoto's seed moves the car up to 19 px): a counted job
    // must miss the inference cache, as a new photo does.
    for (const [i, operation] of OPERATION_NAMES.entries()) await runJob(operation, 10 + i);
    const operations = {} as Record<Operation, TracedOperation>;
    for (const [i, operation] of OPERATION_NAMES.entries()) {
      observed.length = 0;
      logs.clear();
      phaseOf.clear();
      recording = true;
      const { photoBytes, polls } = await runJob(operation, i);
      recording = false;
      for (const fn of facts.jobWorkflow.functions) phaseOf.set(fn, 'workflow');
      operations[operation] = {
        photoBytes,
        polls,
        phases: summarize(observed, logs, phaseOf, photoBytes, facts),
      };
    }
    failed = false;
    return {
      traced: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      command: 'npm run cost -- trace',
      under: tracedUnder(facts),
      operations,
    };
  } finally {
    output.restore(failed);
    await stack.close();
  }
}

/** The Powertools settings every function gets from the template; the trace runs them all with them. */
function powertoolsEnvironment(facts: TemplateFacts): Record<string, string> {
  const levels = new Set(Object.values(facts.functions).map((fn) => fn.logLevel));
  if (levels.size !== 1 || [...levels][0] === null)
    throw new Error(`the functions log at several levels (${[...levels].join(', ')}): the trace runs one`);
  return { POWERTOOLS_LOG_LEVEL: [...levels][0]! };
}

/**
 * The stack's output, kept off the terminal (the last of it is shown if the trace fails), with the bytes
 * written while `counting` added up by the function whose invocation wrote them. The inference workers'
 * output reaches this thread outside any invocation, so what has no caller is theirs.
 */
function captureOutput(into: Map<string, number>, workers: string, counting: () => boolean) {
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  const callerOf = (globalThis as { [LOCAL_CALLER]?: () => string | undefined })[LOCAL_CALLER];
  const tail: string[] = [];
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (counting()) {
        const fn = callerOf?.() ?? workers;
        into.set(fn, (into.get(fn) ?? 0) + Buffer.byteLength(chunk));
      }
      tail.push(Buffer.from(chunk).toString('utf8'));
      if (tail.length > 100) tail.shift();
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof stream.write;
  }
  return {
    restore(failed: boolean) {
      streams.forEach((stream, i) => {
        stream.write = originals[i]!;
      });
      if (failed) process.stderr.write(`The stack's last output:\n${tail.join('')}`);
    },
  };
}

/** The observed calls of one job, by phase; a caller that is no part of a job (the admin, the sweeper) is left out. */
function summarize(
  observed: StandInCall[],
  logs: Map<string, number>,
  phaseOf: Map<string, Phase>,
  photoBytes: number,
  facts: TemplateFacts,
): Record<Phase, TracedPhase> {
  const phases = Object.fromEntries(PHASES.map((phase) => [phase, emptyPhase()])) as Record<
    Phase,
    TracedPhase
  >;
  const of = (fn: string | undefined) => {
    const phase = fn && fn !== ADMIN_ACCESS_KEY ? phaseOf.get(fn) : undefined;
    return phase && phases[phase];
  };
  const count = (phase: TracedPhase, call: string) => {
    phase.calls[call] = (phase.calls[call] ?? 0) + 1;
  };
  const resultSizes = observed.flatMap((call) =>
    call.service === 's3' &&
    STORES.has(call.operation) &&
    call.key.startsWith(STORAGE_PREFIXES.results.prefix)
      ? [call.requestBytes]
      : [],
  );
  const resultBytes = resultSizes.reduce((sum, bytes) => sum + bytes, 0);

  for (const call of observed) {
    switch (call.service) {
      case 'lambda': {
        const phase = of(call.function);
        if (!phase) break;
        const { count: runs = 0, totalMs = 0 } = phase.invocations[call.function] ?? {};
        phase.invocations[call.function] = { count: runs + 1, totalMs: totalMs + call.durationMs };
        break;
      }
      case 'apigateway':
        of(call.function)?.apiRequests.push({
          route: call.routeKey,
          requestBytes: call.requestBytes,
          responseBytes: call.responseBytes,
        });
        break;
      case 'dynamodb': {
        const phase = of(call.caller);
        if (!phase) break;
        count(phase, `dynamodb:${call.operation}`);
        phase.readUnits += call.readUnits;
        const request = { transactional: call.operation === 'TransactWriteItems', ok: call.ok };
        for (const write of call.writes) phase.writeUnits += writeUnits(write, request, facts.table);
        break;
      }
      case 's3': {
        const phase = of(call.caller);
        if (!phase) break;
        count(phase, `s3:${call.operation}`);
        if (call.presigned && call.operation === 'GetObject') phase.downloads++;
        if (!STORES.has(call.operation) || call.status !== 200) break;
        const prefix = `${call.key.split('/')[0]}/`;
        const stored = phase.stored[prefix] ?? { photos: 0, results: 0, otherBytes: 0 };
        phase.stored[prefix] = stored;
        if (call.requestBytes === photoBytes) stored.photos++;
        else if (resultBytes > 0 && resultSizes.includes(call.requestBytes))
          stored.results += call.requestBytes / resultBytes;
        else stored.otherBytes += call.requestBytes;
        break;
      }
      case 'states':
      case 'events': {
        const phase = of(call.caller);
        if (!phase) break;
        count(phase, `${call.service}:${call.operation}`);
        if (call.service === 'events') phase.eventBytes.push(...call.entryBytes);
        break;
      }
    }
  }
  for (const [fn, bytes] of logs) {
    const phase = of(fn);
    if (phase) phase.logBytes += bytes;
  }
  for (const phase of Object.values(phases)) {
    for (const invocations of Object.values(phase.invocations))
      invocations.totalMs = Math.round(invocations.totalMs);
  }
  return phases;
}
