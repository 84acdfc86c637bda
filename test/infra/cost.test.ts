import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { JOB_POLLING } from '../../client/index.ts';
import type { CfnTemplate } from '../../lib/app.ts';
import { ESTIMATES } from '../../tools/cost/estimates.ts';
import {
  type Bench,
  benchFigures,
  inferenceMsAt,
  jobCost,
  overhead,
  type Trace,
} from '../../tools/cost/model.ts';
import { PRICES } from '../../tools/cost/prices.ts';
import { costTable, inputsSummary, memoryTable, readSnapshots, staleness } from '../../tools/cost/report.ts';
import { templateFacts, UnfollowedStateError } from '../../tools/cost/template-facts.ts';
import { plainAssembly } from '../support/assembly.ts';

/**
 * The cost model (tools/cost/) reads the template for what it can price from it alone (the workflow's type,
 * its states, its log level, tracing, memory) and a trace of one job per operation for the rest. These tests
 * change the template as a change to the app would and check that the model follows it, or that the trace
 * is found stale, and that docs/deploy.md shows what the model prints now.
 */
type Templates = { data: CfnTemplate; service: CfnTemplate };
// biome-ignore lint/suspicious/noExplicitAny: template JSON, changed in place.
type Json = Record<string, any>;

let templates: Templates;
let snapshots: { trace: Trace; bench: Bench };
beforeAll(async () => {
  templates = (await plainAssembly()).templates;
  snapshots = await readSnapshots();
});

const changed = (change: (resources: Record<string, Json>) => void): Templates => {
  const copy = structuredClone(templates);
  change(copy.service.Resources as Record<string, Json>);
  return copy;
};

/** The job workflow's state machine: the one starting at PrepareJob, as local/stack.ts tells them apart. */
const jobMachine = (resources: Record<string, Json>): Json =>
  Object.values(resources).find(
    (resource) =>
      resource.Type === 'AWS::StepFunctions::StateMachine' &&
      JSON.stringify(resource.Properties.DefinitionString).includes('\\"StartAt\\":\\"PrepareJob\\"'),
  )!;

/** A state put before PrepareJob. */
const withFirstState = (state: object) =>
  changed((resources) => {
    const parts = jobMachine(resources).Properties.DefinitionString['Fn::Join'][1] as unknown[];
    parts[0] = String(parts[0]).replace(
      '{"StartAt":"PrepareJob","States":{',
      `{"StartAt":"First","States":{"First":${JSON.stringify({ ...state, Next: 'PrepareJob' })},`,
    );
  });

const cost = (of: Templates, operation: keyof Trace['operations'] = 'plate') =>
  jobCost({
    facts: templateFacts(of),
    traced: snapshots.trace.operations[operation],
    bench: benchFigures(snapshots.bench, operation),
    polling: JOB_POLLING,
    prices: PRICES,
    estimates: ESTIMATES,
  });

describe('the cost model and the template', () => {
  it('has a trace counted under the template synthesized now', () => {
    expect(staleness(snapshots.trace, templates), 'run `npm run cost -- trace`').toEqual([]);
  });

  it('finds the trace stale when a state is added, a function logs at another level or an index changes', () => {
    expect(staleness(snapshots.trace, withFirstState({ Type: 'Pass' }))).toEqual([
      expect.stringMatching(/^successPath:/),
    ]);
    const debug = changed((resources) => {
      const fn = Object.values(resources).find((resource) => resource.Type === 'AWS::Lambda::Function')!;
      fn.Properties.Environment.Variables.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    });
    expect(staleness(snapshots.trace, debug)).toEqual([expect.stringMatching(/^functionLogLevels:/)]);
    const index = structuredClone(templates);
    const table = Object.values(index.data.Resources).find(
      (resource) => resource.Type === 'AWS::DynamoDB::Table',
    )!;
    (table.Properties as Json).GlobalSecondaryIndexes[0].Projection = { ProjectionType: 'KEYS_ONLY' };
    expect(staleness(snapshots.trace, index)).toEqual([expect.stringMatching(/^table:/)]);
  });

  it('refuses a state it cannot follow, rather than price a path it does not know', () => {
    expect(() =>
      templateFacts(withFirstState({ Type: 'Choice', Choices: [], Default: 'PrepareJob' })),
    ).toThrow(UnfollowedStateError);
  });

  it('follows a new state, the execution log level, tracing and the workflow type from the template', () => {
    const now = cost(templates);
    // Express bills the run and its duration, not its states; Standard each state entered.
    expect(cost(withFirstState({ Type: 'Pass' }))['Step Functions']).toBeCloseTo(now['Step Functions'], 12);
    const standard = changed((resources) => {
      jobMachine(resources).Properties.StateMachineType = 'STANDARD';
    });
    expect(cost(standard)['Step Functions']).toBeCloseTo(5 * PRICES.stepFunctions.standardTransition, 12);
    expect(cost(standard)['Step Functions']).toBeGreaterThan(20 * now['Step Functions']);
    const loud = changed((resources) => {
      jobMachine(resources).Properties.LoggingConfiguration.Level = 'ALL';
    });
    expect(cost(loud)['CloudWatch Logs']).toBeGreaterThan(now['CloudWatch Logs']);
    const traced = (on: boolean) =>
      changed((resources) => {
        for (const resource of Object.values(resources)) {
          if (resource.Type === 'AWS::Lambda::Function')
            resource.Properties.TracingConfig = on ? { Mode: 'Active' } : undefined;
          if (resource.Type === 'AWS::StepFunctions::StateMachine')
            resource.Properties.TracingConfiguration = on ? { Enabled: true } : undefined;
        }
      });
    expect(cost(traced(true))['X-Ray']).toBeGreaterThan(0);
    expect(cost(traced(false))['X-Ray']).toBe(0);
    const bigger = changed((resources) => {
      const inference = Object.values(resources).find(
        (resource) => resource.Properties?.PackageType === 'Image',
      )!;
      inference.Properties.MemorySize = 2 * inference.Properties.MemorySize;
    });
    // Twice the GB, each second of it shorter by the CPU the extra memory brings (ESTIMATES, up to two vCPUs).
    const facts = templateFacts(templates);
    const memoryMb = facts.functions[facts.inferenceFunction]!.memoryMb;
    const ratio =
      (2 * inferenceMsAt(1000, 2 * memoryMb, ESTIMATES)) / inferenceMsAt(1000, memoryMb, ESTIMATES);
    expect(cost(bigger)['Lambda: inference'] / now['Lambda: inference']).toBeCloseTo(ratio, 2);
  });

  it('counts as overhead neither the inference nor the download nor one stored copy of the result', () => {
    const facts = templateFacts(templates);
    const withResultsOf = (scale: number) => {
      const figures = benchFigures(snapshots.bench, 'background');
      const bench = {
        ...figures,
        filesBytes: figures.filesBytes * scale,
        urlBytes: figures.urlBytes * scale,
      };
      const inputs = { facts, bench, prices: PRICES, estimates: ESTIMATES };
      const costs = jobCost({
        ...inputs,
        traced: snapshots.trace.operations.background,
        polling: JOB_POLLING,
      });
      return { costs, overhead: overhead(costs, inputs) };
    };
    // A result three times the size costs more to store and send; the overhead stays, as long as the
    // result is stored once (a second copy would be overhead, and grow with it).
    const [now, larger] = [withResultsOf(1), withResultsOf(3)];
    expect(larger.costs['S3 storage']).toBeGreaterThan(now.costs['S3 storage']);
    expect(larger.costs['data out']).toBeGreaterThan(now.costs['data out']);
    expect(larger.overhead).toBeCloseTo(now.overhead, 12);
  });

  it('is shown in docs/deploy.md as `npm run cost` prints it now', () => {
    const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'deploy.md'), 'utf8');
    const printed = [costTable, memoryTable, inputsSummary]
      .map((part) => part(templates, snapshots))
      .join('\n\n');
    expect(doc.includes(printed), `paste what \`npm run cost\` prints into docs/deploy.md:\n${printed}`).toBe(
      true,
    );
  });
});
