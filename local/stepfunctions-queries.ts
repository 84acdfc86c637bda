import type { Execution, Status } from './stepfunctions-journal.ts';

/** An API error of Step Functions: its type becomes the `__type` of the 400 answer. */
export class SfnError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** DescribeExecution, ListExecutions and the lookup StopExecution shares, with the answers AWS gives. */
export function executionQueries(
  executions: ReadonlyMap<string, Execution>,
  typeOf: (stateMachineArn: string) => 'STANDARD' | 'EXPRESS' | undefined,
) {
  function find(body: { executionArn?: string }): Execution {
    const exec = executions.get(String(body.executionArn));
    // DescribeExecution and StopExecution do not support Express executions.
    if (exec?.express || String(body.executionArn).includes(':express:'))
      throw new SfnError('InvalidArn', `Invalid Arn: 'Resource type not valid in this context: express'`);
    if (exec) return exec;
    if (!String(body.executionArn).startsWith('arn:'))
      throw new SfnError('InvalidArn', `Invalid Arn: '${body.executionArn}'`);
    throw new SfnError('ExecutionDoesNotExist', `Execution Does Not Exist: '${body.executionArn}'`);
  }

  function list(body: {
    stateMachineArn?: string;
    statusFilter?: Status;
    maxResults?: number;
    nextToken?: string;
  }) {
    const type = typeOf(String(body.stateMachineArn));
    if (!type) {
      throw new SfnError(
        'StateMachineDoesNotExist',
        `State Machine Does Not Exist: '${body.stateMachineArn}'`,
      );
    }
    if (type === 'EXPRESS')
      throw new SfnError(
        'StateMachineTypeNotSupported',
        'This operation is not supported by this type of state machine',
      );
    const matching = [...executions.values()]
      .filter(
        (e) =>
          e.stateMachineArn === body.stateMachineArn &&
          (!body.statusFilter || e.status === body.statusFilter),
      )
      .reverse(); // newest first, like AWS
    const from = Number(body.nextToken ?? 0);
    const to = from + (body.maxResults || 100);
    const executionsPage = matching
      .slice(from, to)
      .map(({ executionArn, stateMachineArn, name, status, startDate, stopDate }) => ({
        executionArn,
        stateMachineArn,
        name,
        status,
        startDate: seconds(startDate),
        stopDate: seconds(stopDate),
      }));
    return { executions: executionsPage, nextToken: to < matching.length ? String(to) : undefined };
  }

  const describe = (body: { executionArn?: string }) => {
    const { abort, settled, startDate, stopDate, input, output, ...rest } = find(body);
    return {
      ...rest,
      startDate: seconds(startDate),
      stopDate: seconds(stopDate),
      input,
      inputDetails: { included: true },
      output,
    };
  };

  return { find, list, describe };
}

/** StartExecution's answer. */
export const startedOf = (e: Execution) => ({
  executionArn: e.executionArn,
  startDate: seconds(e.startDate),
});
/** Dates as the JSON 1.0 protocol writes them: seconds since the epoch. */
export const seconds = (date: Date | undefined) => (date ? date.getTime() / 1000 : undefined);
