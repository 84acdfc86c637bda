import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { JOB_POLLING } from '../../client/index.ts';
import type { CfnTemplate } from '../../lib/app.ts';
import { ESTIMATES } from './estimates.ts';
import {
  atTemplateMemory,
  type Bench,
  type BenchStamp,
  benchFigures,
  inferenceMsAt,
  jobCost,
  overhead,
  pollsFor,
  SERVICES,
  type Service,
  type Trace,
  tracedUnder,
  workflowMs,
} from './model.ts';
import { PRICES } from './prices.ts';
import { templateFacts } from './template-facts.ts';

/** The trace (`npm run cost -- trace`) and the bench's figures (`npm run bench -- --json`), as committed. */
export const TRACE_FILE = path.join(import.meta.dirname, 'traced-requests.json');
const BENCH_FILE = path.join(import.meta.dirname, 'bench.json');

export async function readSnapshots(): Promise<{ trace: Trace; bench: Bench }> {
  const read = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
  return { trace: await read(TRACE_FILE), bench: await read(BENCH_FILE) };
}

/** What of the template changed since the trace, each a line; empty when the trace still holds. */
export function staleness(trace: Trace, templates: { data: CfnTemplate; service: CfnTemplate }): string[] {
  const now = tracedUnder(templateFacts(templates));
  return (Object.keys(now) as Array<keyof typeof now>).flatMap((name) =>
    JSON.stringify(now[name]) === JSON.stringify(trace.under[name])
      ? []
      : [
          `${name}: traced under ${JSON.stringify(trace.under[name])}, the template now has ${JSON.stringify(now[name])}`,
        ],
  );
}

const dollars = (value: number) => (value === 0 ? '0' : value.toFixed(3).replace(/^0\./, '.'));

/**
 * Per 1,000 jobs: a column for each operation, a row for each service, the total, then the overhead: the
 * total less the inference function, data out and one stored copy of the result (Markdown).
 */
export function costTable(
  templates: { data: CfnTemplate; service: CfnTemplate },
  { trace, bench }: { trace: Trace; bench: Bench },
): string {
  const facts = templateFacts(templates);
  const operations = Object.keys(trace.operations) as Array<keyof Trace['operations']>;
  const inputs = operations.map((operation) => ({
    facts,
    traced: trace.operations[operation],
    bench: benchFigures(bench, operation),
    polling: JOB_POLLING,
    prices: PRICES,
    estimates: ESTIMATES,
  }));
  const costs = inputs.map((input) => jobCost(input));
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const per1000 = (cost: Record<Service, number>, service: Service) => dollars(cost[service] * 1000);
  const total = (cost: Record<Service, number>) => SERVICES.reduce((sum, service) => sum + cost[service], 0);
  return [
    row(['per 1,000 jobs, $', ...operations]),
    row(['---', ...operations.map(() => '---:')]),
    ...SERVICES.map((service) => row([service, ...costs.map((cost) => per1000(cost, service))])),
    row(['**total**', ...costs.map((cost) => `**${dollars(total(cost) * 1000)}**`)]),
    row([
      'overhead (all but inference, data out and one stored copy of the result)',
      ...costs.map((cost, i) => dollars(overhead(cost, inputs[i]!) * 1000)),
    ]),
  ].join('\n');
}

/**
 * Lambda: inference per 1,000 jobs at each memory size of ESTIMATES and the template's (marked): a row for
 * each size, its modelled p50 beside each cost (the bench's scaled by the size's CPU share).
 */
export function memoryTable(
  templates: { data: CfnTemplate; service: CfnTemplate },
  { trace, bench }: { trace: Trace; bench: Bench },
): string {
  const facts = templateFacts(templates);
  const set = facts.functions[facts.inferenceFunction]!.memoryMb;
  const sizes = [...new Set([...ESTIMATES.inferenceMemorySizesMb, set])].sort((a, b) => a - b);
  const operations = Object.keys(trace.operations) as Array<keyof Trace['operations']>;
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const at = (memoryMb: number) => {
    const resized = structuredClone(facts);
    resized.functions[facts.inferenceFunction]!.memoryMb = memoryMb;
    return resized;
  };
  return [
    row(['Lambda: inference per 1,000 jobs, $ (p50 s)', ...operations]),
    row(['---', ...operations.map(() => '---:')]),
    ...sizes.map((memoryMb) =>
      row([
        `${memoryMb.toLocaleString('en-US')} MB${memoryMb === set ? ' (set)' : ''}`,
        ...operations.map((operation) => {
          const figures = benchFigures(bench, operation);
          const cost = jobCost({
            facts: at(memoryMb),
            traced: trace.operations[operation],
            bench: figures,
            polling: JOB_POLLING,
            prices: PRICES,
            estimates: ESTIMATES,
          })['Lambda: inference'];
          const seconds = inferenceMsAt(figures.p50Ms, memoryMb, ESTIMATES) / 1000;
          return `${dollars(cost * 1000)} (${seconds.toFixed(1)})`;
        }),
      ]),
    ),
  ].join('\n');
}

/** The inputs the table was made from, a Markdown list. */
export function inputsSummary(
  templates: { data: CfnTemplate; service: CfnTemplate },
  { trace, bench }: { trace: Trace; bench: Bench },
): string {
  const facts = templateFacts(templates);
  const inference = facts.functions[facts.inferenceFunction]!;
  const workflow = facts.jobWorkflow;
  const zip = Object.entries(facts.functions).filter(([fn]) => fn !== facts.inferenceFunction);
  const memories = [...new Set(zip.map(([, fn]) => `${fn.memoryMb} MB ${fn.architecture}`))].join(', ');
  const operations = Object.keys(trace.operations) as Array<keyof Trace['operations']>;
  const perOperation = (describe: (operation: keyof Trace['operations']) => string) =>
    operations.map((operation) => `${operation} ${describe(operation)}`).join(', ');
  const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;
  const stamp = (block: BenchStamp) =>
    `${block.measured}, ${block.host}, load average ${block.loadAverage.before} → ${block.loadAverage.after} ` +
    `(${block.command}${block.source ? `; ${block.source}` : ''})`;
  const jobPolls = (operation: keyof Trace['operations']) =>
    String(
      pollsFor(
        workflowMs(
          facts.inferenceFunction,
          trace.operations[operation],
          atTemplateMemory(facts, benchFigures(bench, operation), ESTIMATES),
        ),
        JOB_POLLING,
      ),
    );
  return [
    `- Prices: ${PRICES.region} list prices as of ${PRICES.date} (tools/cost/prices.ts).`,
    `- Template: inference ${inference.memoryMb} MB ${inference.architecture}; other functions ${memories}; ` +
      `job workflow ${workflow.type}, ${workflow.successPath.length} states (${workflow.successPath.map((state) => state.name).join(' → ')}), ` +
      `execution log ${workflow.logLevel}, X-Ray on the workflow ${workflow.tracing ? 'on' : 'off'} and on ` +
      `${Object.values(facts.functions).filter((fn) => fn.tracing).length} of ${Object.keys(facts.functions).length} functions; ` +
      `function log level ${trace.under.functionLogLevels.join(', ')}.`,
    `- Requests: one traced job per operation, ${trace.traced} (${trace.command}, tools/cost/traced-requests.json).`,
    `- Inference run time: the bench's p50, ${perOperation((operation) => `${(benchFigures(bench, operation).p50Ms / 1000).toFixed(2)} s`)}; ` +
      `${stamp(bench.durations)}; at ${inference.memoryMb} MB taken as ${(ESTIMATES.benchVcpus / Math.min(ESTIMATES.benchVcpus, inference.memoryMb / ESTIMATES.lambdaMbPerVcpu)).toFixed(2)}x that ` +
      `(CPU in proportion to memory, ${ESTIMATES.lambdaMbPerVcpu} MB a vCPU, the bench's work on ${ESTIMATES.benchVcpus}; tools/cost/estimates.ts).`,
    `- Photo ${kb(bench.sizes.operations[operations[0]!].sourceBytes)} (the bench's 12 MP JPEG); result files ` +
      `${perOperation((operation) => kb(benchFigures(bench, operation).filesBytes))}; ${stamp(bench.sizes)}.`,
    `- Polling client (JOB_POLLING of client/index.ts): GET /jobs/{id} ${perOperation(jobPolls)} times; ${
      workflow.tracing || Object.values(facts.functions).some((fn) => fn.tracing)
        ? 'every request traced by X-Ray (tools/cost/estimates.ts)'
        : 'no request traced by X-Ray (PhotoJobsProps.tracing)'
    }.`,
  ].join('\n');
}
