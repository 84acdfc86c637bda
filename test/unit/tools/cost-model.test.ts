import { describe, expect, it } from 'vitest';
import { itemBytes, writeUnits } from '../../../tools/cost/dynamodb-units.ts';
import { ESTIMATES } from '../../../tools/cost/estimates.ts';
import {
  emptyPhase,
  executionLogEvents,
  inferenceMsAt,
  jobCost,
  type ModelInputs,
  PHASES,
  pollsFor,
  s3RequestPrice,
  type TracedPhase,
} from '../../../tools/cost/model.ts';
import { PRICES } from '../../../tools/cost/prices.ts';
import { successPath, type TemplateFacts, UnfollowedStateError } from '../../../tools/cost/template-facts.ts';

const POLLING = { firstDelayMs: 250, factor: 1.5, maxDelayMs: 3000 };
const S = (text: string) => ({ S: text });

const facts = (change: (facts: TemplateFacts) => void = () => undefined): TemplateFacts => {
  const made: TemplateFacts = {
    functions: {
      Api: { handler: 'api.ts', memoryMb: 512, architecture: 'arm64', tracing: true, logLevel: 'INFO' },
      Task: { handler: 'task.ts', memoryMb: 1024, architecture: 'x86_64', tracing: true, logLevel: 'INFO' },
      Inference: {
        handler: 'inf.ts',
        // Two vCPUs, the bench's: its run time as measured (ESTIMATES).
        memoryMb: 3538,
        architecture: 'arm64',
        tracing: true,
        logLevel: 'INFO',
      },
    },
    inferenceFunction: 'Inference',
    jobWorkflow: {
      type: 'STANDARD',
      successPath: [
        { name: 'Work', type: 'Task' },
        { name: 'Infer', type: 'Task' },
        { name: 'Done', type: 'Succeed' },
      ],
      functions: ['Task', 'Inference'],
      logLevel: 'ALL',
      tracing: true,
    },
    accessLogFormatBytes: 200,
    table: { keys: ['pk'], indexes: [] },
    expiryDays: { 'sources/': 7, 'results/': 30 },
  };
  change(made);
  return made;
};

const phase = (parts: Partial<TracedPhase> = {}): TracedPhase => ({ ...emptyPhase(), ...parts });

/** One job: a create (the photo in its body), two polls, a task and the inference, one download. */
const inputs = (change: (inputs: ModelInputs) => void = () => undefined): ModelInputs => {
  const made: ModelInputs = {
    facts: facts(),
    traced: {
      photoBytes: 1000,
      polls: 2,
      phases: {
        create: phase({
          invocations: { Api: { count: 1, totalMs: 100 } },
          apiRequests: [{ route: 'POST /jobs', requestBytes: 1200, responseBytes: 500 }],
          calls: { 's3:PutObject': 1, 'dynamodb:TransactWriteItems': 1 },
          writeUnits: 4,
          readUnits: 1,
          stored: { 'sources/': { photos: 1, results: 0, otherBytes: 0 } },
          logBytes: 600,
        }),
        poll: phase({
          invocations: { Api: { count: 2, totalMs: 100 } },
          apiRequests: [
            { route: 'GET /jobs/{id}', requestBytes: 0, responseBytes: 700 },
            { route: 'GET /jobs/{id}', requestBytes: 0, responseBytes: 700 },
          ],
          writeUnits: 2,
          readUnits: 2,
        }),
        workflow: phase({
          invocations: { Task: { count: 2, totalMs: 400 }, Inference: { count: 1, totalMs: 50 } },
          calls: { 's3:GetObject': 1, 's3:PutObject': 1, 's3:DeleteObject': 1 },
          writeUnits: 10,
          readUnits: 3,
          stored: { 'results/': { photos: 0, results: 1, otherBytes: 100 } },
          eventBytes: [1000],
          logBytes: 1000,
        }),
        download: phase({
          invocations: { Api: { count: 1, totalMs: 20 } },
          apiRequests: [{ route: 'GET /results', requestBytes: 0, responseBytes: 0 }],
          calls: { 's3:GetObject': 1 },
          downloads: 1,
        }),
      },
    },
    bench: { p50Ms: 2000, sourceBytes: 3 * 2 ** 20, filesBytes: 2 * 2 ** 20, urlBytes: 2 ** 20 },
    polling: POLLING,
    prices: PRICES,
    estimates: ESTIMATES,
  };
  change(made);
  return made;
};

const GB = 2 ** 30;

describe('cost model', () => {
  it('bills a Standard workflow one transition per state of the success path, and follows a new state', () => {
    expect(jobCost(inputs())['Step Functions']).toBeCloseTo(3 * 0.000025, 12);
    const longer = inputs((i) => i.facts.jobWorkflow.successPath.unshift({ name: 'Wait', type: 'Pass' }));
    expect(jobCost(longer)['Step Functions']).toBeCloseTo(4 * 0.000025, 12);
  });

  it('bills an Express workflow per execution and per GB-second of the whole workflow in 100 ms steps', () => {
    const express = inputs((i) => {
      i.facts.jobWorkflow.type = 'EXPRESS';
    });
    // Two 200 ms tasks and the bench's 2,000 ms inference: 2.4 s at 64 MB.
    expect(jobCost(express)['Step Functions']).toBeCloseTo(1e-6 + 2.4 * (64 / 1024) * 0.00001667, 12);
  });

  it('bills the inference function the bench p50 at its memory and architecture, not its traced run', () => {
    const gbSeconds = (3538 / 1024) * 2;
    expect(jobCost(inputs())['Lambda: inference']).toBeCloseTo(0.2e-6 + gbSeconds * 0.0000133334, 12);
    const x86 = inputs((i) => {
      i.facts.functions.Inference!.architecture = 'x86_64';
    });
    expect(jobCost(x86)['Lambda: inference']).toBeCloseTo(0.2e-6 + gbSeconds * 0.0000166667, 12);
  });

  it('takes the bench run time at the CPU share of the inference memory: longer below two vCPUs, no shorter above', () => {
    const at = (memoryMb: number) =>
      jobCost(inputs((i) => (i.facts.functions.Inference!.memoryMb = memoryMb)));
    // 1,769 MB is one vCPU: the 2 s take 4 s, the same GB-seconds as two vCPUs for 2 s.
    expect(inferenceMsAt(2000, 1769, ESTIMATES)).toBeCloseTo(4000, 6);
    expect(at(1769)['Lambda: inference']).toBeCloseTo(at(3538)['Lambda: inference'], 8);
    // Past two vCPUs the run is no shorter, so more memory costs more.
    expect(inferenceMsAt(2000, 7076, ESTIMATES)).toBe(2000);
    expect(at(7076)['Lambda: inference']).toBeCloseTo(2 * at(3538)['Lambda: inference'], 6);
  });

  it('counts the polls a job of that length needs, from the traced cost of one', () => {
    // 2 x 200 ms + 2,000 ms of workflow: polls at 0, 250, 625, 1,188, 2,031 and 3,297 ms.
    expect(pollsFor(2400, POLLING)).toBe(6);
    const { 'Lambda: API and workflow tasks': lambda } = jobCost(inputs());
    // The create (100 ms) and the download (20 ms) apart, each poll runs 50 ms; the task twice 200 ms at 1 GB x86.
    const expected =
      0.2e-6 +
      0.5 * 0.1 * 0.0000133334 +
      6 * (0.2e-6 + 0.5 * 0.05 * 0.0000133334) +
      0.2e-6 +
      0.5 * 0.02 * 0.0000133334 +
      2 * (0.2e-6 + 1 * 0.2 * 0.0000166667);
    expect(lambda).toBeCloseTo(expected, 12);
  });

  it('meters API requests in 512 KB steps, with the bench photo in place of the traced one', () => {
    // The create carries a 3 MiB photo and 200 bytes of form (7 steps); 6 polls and a download are one each.
    expect(jobCost(inputs())['API Gateway']).toBeCloseTo((7 + 6 + 1) * 1e-6, 12);
  });

  it('prices DynamoDB units, S3 requests by tier and storage by each prefix lifetime', () => {
    const cost = jobCost(inputs());
    // Each traced poll wrote and read 1 unit; the job makes 6 polls.
    expect(cost.DynamoDB).toBeCloseTo((4 + 10 + 6) * 0.625e-6 + (1 + 3 + 6) * 0.125e-6, 12);
    expect(cost['S3 requests']).toBeCloseTo(2 * 0.005e-3 + 2 * 0.0004e-3, 12);
    const months = (days: number) => (days + 0.5) / (730 / 24);
    const stored = ((3 * 2 ** 20) / GB) * months(7) + ((2 * 2 ** 20 + 100) / GB) * months(30);
    expect(cost['S3 storage']).toBeCloseTo(stored * 0.023, 12);
    const forever = inputs((i) => {
      i.traced.phases.workflow.stored['keys/'] = { photos: 0, results: 0, otherBytes: 1 };
    });
    expect(() => jobCost(forever)).toThrow(/keys\/ never expire/);
  });

  it('sends the downloaded result and every API answer out', () => {
    const bytes = 2 ** 20 + 500 + 6 * 700;
    expect(jobCost(inputs())['data out']).toBeCloseTo((bytes / GB) * 0.09, 12);
  });

  it('records a trace per API request and one per traced execution, and follows the tracing switches', () => {
    expect(jobCost(inputs())['X-Ray']).toBeCloseTo((1 + 6 + 1 + 1) * 5e-6, 12);
    const untracedWorkflow = inputs((i) => {
      i.facts.jobWorkflow.tracing = false;
    });
    // Each traced task then starts its own: two task runs and the inference.
    expect(jobCost(untracedWorkflow)['X-Ray']).toBeCloseTo((1 + 6 + 1 + 3) * 5e-6, 12);
    const untraced = inputs((i) => {
      i.facts.jobWorkflow.tracing = false;
      for (const fn of Object.values(i.facts.functions)) fn.tracing = false;
    });
    expect(jobCost(untraced)['X-Ray']).toBe(0);
  });

  it('ingests the functions’ lines, Lambda’s own, the access log and, at ALL, the execution’s events', () => {
    const invocations = 1 + 6 + 3 + 1;
    const bytes =
      600 +
      1000 +
      invocations * ESTIMATES.lambdaPlatformLogBytes +
      8 * 200 +
      14 * ESTIMATES.stepFunctionsLogEventBytes;
    expect(jobCost(inputs())['CloudWatch Logs']).toBeCloseTo((bytes / GB) * 0.5, 12);
    const errorsOnly = inputs((i) => {
      i.facts.jobWorkflow.logLevel = 'ERROR';
    });
    expect(jobCost(inputs())['CloudWatch Logs'] - jobCost(errorsOnly)['CloudWatch Logs']).toBeCloseTo(
      ((14 * ESTIMATES.stepFunctionsLogEventBytes) / GB) * 0.5,
      12,
    );
  });

  it('bills each EventBridge entry per 64 KB chunk', () => {
    expect(jobCost(inputs()).EventBridge).toBeCloseTo(1e-6, 12);
    const large = inputs((i) => {
      i.traced.phases.workflow.eventBytes = [64 * 1024 + 1];
    });
    expect(jobCost(large).EventBridge).toBeCloseTo(2e-6, 12);
  });

  it('knows every phase', () => {
    expect(Object.keys(inputs().traced.phases).sort()).toEqual([...PHASES].sort());
  });
});

describe('execution log events', () => {
  it('counts five events a task and two for any other state, with the execution’s start and end, at ALL only', () => {
    const path = [{ type: 'Task' }, { type: 'Task' }, { type: 'Succeed' }];
    expect(executionLogEvents(path, 'ALL')).toBe(2 + 5 + 5 + 2);
    expect(executionLogEvents(path, 'ERROR')).toBe(0);
    expect(executionLogEvents(path, 'OFF')).toBe(0);
  });
});

describe('success path', () => {
  it('follows Next from StartAt to the end', () => {
    const definition = {
      StartAt: 'A',
      States: { A: { Type: 'Task', Next: 'B' }, B: { Type: 'Task', Next: 'C' }, C: { Type: 'Succeed' } },
    };
    expect(successPath(definition).map((state) => state.name)).toEqual(['A', 'B', 'C']);
  });

  it('refuses a state it cannot follow', () => {
    const definition = { StartAt: 'A', States: { A: { Type: 'Choice', Choices: [], Default: 'A' } } };
    expect(() => successPath(definition)).toThrow(UnfollowedStateError);
  });
});

describe('S3 request prices', () => {
  it('puts writes and lists in the dear tier, reads in the cheap one, deletes free', () => {
    expect(s3RequestPrice('PutObject', PRICES)).toBe(PRICES.s3.tier1Request);
    expect(s3RequestPrice('ListObjectsV2', PRICES)).toBe(PRICES.s3.tier1Request);
    expect(s3RequestPrice('CompleteMultipartUpload', PRICES)).toBe(PRICES.s3.tier1Request);
    expect(s3RequestPrice('GetObject', PRICES)).toBe(PRICES.s3.tier2Request);
    expect(s3RequestPrice('HeadObject', PRICES)).toBe(PRICES.s3.tier2Request);
    expect(s3RequestPrice('DeleteObject', PRICES)).toBe(0);
    expect(s3RequestPrice('AbortMultipartUpload', PRICES)).toBe(0);
  });
});

describe('DynamoDB item size', () => {
  it('adds names and values: UTF-8 strings, numbers by digit pairs, 3 bytes and 1 an element for lists and maps', () => {
    expect(itemBytes({ pk: S('a') })).toBe(3);
    expect(itemBytes({ é: S('é') })).toBe(4);
    expect(itemBytes({ n: { N: '123' } })).toBe(1 + 1 + 2);
    expect(itemBytes({ n: { N: '1000' } })).toBe(1 + 2);
    expect(itemBytes({ m: { M: { a: S('bc') } } })).toBe(1 + 3 + 1 + 1 + 2);
    expect(itemBytes({ l: { L: [{ BOOL: true }, { NULL: true }] } })).toBe(1 + 3 + 2 + 2);
    expect(itemBytes({ b: { B: Buffer.from('abcd').toString('base64') } })).toBe(1 + 4);
  });
});

describe('DynamoDB write units', () => {
  const filler = (bytes: number) => S('x'.repeat(bytes));
  const table = {
    keys: ['pk'],
    indexes: [
      { name: 'all', keys: ['gpk'], projection: 'ALL', nonKeyAttributes: [] },
      { name: 'keys', keys: ['kpk'], projection: 'KEYS_ONLY', nonKeyAttributes: [] },
    ],
  };
  const plain = { transactional: false, ok: true };

  it('charges the larger image per KB, twice in a transaction, and the same for a failed condition', () => {
    const before = { pk: S('a'), data: filler(1500) };
    const after = { pk: S('a'), data: filler(100) };
    expect(writeUnits({ table: 't', before, after }, plain, { keys: ['pk'], indexes: [] })).toBe(2);
    expect(
      writeUnits(
        { table: 't', before, after },
        { ...plain, transactional: true },
        { keys: ['pk'], indexes: [] },
      ),
    ).toBe(4);
    expect(writeUnits({ table: 't', before: null, after: null }, { ...plain, ok: false }, table)).toBe(1);
    expect(
      writeUnits(
        { table: 't', before, after: before, checkOnly: true },
        { ...plain, transactional: true },
        table,
      ),
    ).toBe(4);
  });

  it('adds a write to each index the item enters, two when its index key changes, none when its entry stays', () => {
    const item = { pk: S('a'), gpk: S('g1'), kpk: S('k'), data: filler(1500) };
    // Put: table 2, ALL index 2, KEYS_ONLY index 1 (its entry is the keys).
    expect(writeUnits({ table: 't', before: null, after: item }, plain, table)).toBe(5);
    // The ALL index key moves: 2 + 2 there; the KEYS_ONLY entry is unchanged.
    const moved = { ...item, gpk: S('g2') };
    expect(writeUnits({ table: 't', before: item, after: moved }, plain, table)).toBe(2 + 4);
    // A non-key attribute: the ALL entry is rewritten, the KEYS_ONLY one is not.
    const edited = { ...item, data: filler(1400) };
    expect(writeUnits({ table: 't', before: item, after: edited }, plain, table)).toBe(2 + 2);
    // Leaving a sparse index: one write removes the old entry.
    const { kpk: _kpk, ...left } = item;
    expect(writeUnits({ table: 't', before: item, after: left }, plain, table)).toBe(2 + 2 + 1);
  });
});
