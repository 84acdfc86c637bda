import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { sweeper, table as tableConfig, workflowFunction, workflowHandlers } from '../config.ts';
import { acknowledge } from './acknowledge.ts';
import { type DataAccess, tableActions } from './bucket-access.ts';
import { constructIdOf, createHandlerFunction } from './handler-function.ts';
import { StuckWorkSweeper } from './stuck-work-sweeper.ts';
import type { TracingMode } from './tracing.ts';

/** What every part of the service is built from: the construct it lives in and what they share. */
export interface ServiceContext {
  scope: Construct;
  data: DataAccess;
  /** Environment every function gets: Powertools' settings (layers/aws/observability.ts). */
  common: Record<string, string>;
  /** PhotoJobsProps.tracing, for every function and state machine. */
  tracing: TracingMode;
  logRetention?: logs.RetentionDays;
  /** Known before the state machines exist (they are named), so that their task functions can start them. */
  stateMachineArn: string;
  archiveStateMachineArn: string;
}

/** A function run by a workflow or a schedule; its own role, with the table actions of a task. */
export function createTaskFunction(
  ctx: ServiceContext,
  handler: string,
  environment: Record<string, string>,
  size: { memoryMiB: number; timeoutSeconds: number } = workflowFunction,
  idPrefix = 'Workflow',
): lambda.Function {
  const fn = createHandlerFunction(ctx.scope, `${idPrefix}${constructIdOf(handler)}`, {
    handler,
    environment: { ...ctx.common, TABLE_NAME: ctx.data.table.tableName, ...environment },
    memorySize: size.memoryMiB,
    timeout: Duration.seconds(size.timeoutSeconds),
    logRetention: ctx.logRetention,
    tracing: ctx.tracing,
  });
  ctx.data.grantTable(fn, tableActions.workflow);
  return fn;
}

/**
 * The job workflow's task functions. Each has a role of its own with what its task needs: none reaches the
 * bucket. Job terminal events go to a bus of the service's own unless one is given, so that rules for them
 * need no filter on everything else an account sends to its default bus.
 */
export function createJobTasks(
  ctx: ServiceContext,
  eventBusName: string,
  existingEventBus?: events.IEventBus,
) {
  const prepareJob = createTaskFunction(ctx, workflowHandlers.prepareJob, {});
  // Settling a batch item starts the batch's next item (docs/decisions/0032-batches-are-jobs-driven-by-settlement.md). By ARN: the state
  // machine depends on this function.
  const settleJob = createTaskFunction(ctx, workflowHandlers.settleJob, {
    STATE_MACHINE_ARN: ctx.stateMachineArn,
  });
  settleJob.addToRolePolicy(
    new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [ctx.stateMachineArn] }),
  );
  const eventBus = existingEventBus ?? new events.EventBus(ctx.scope, 'JobEvents', { eventBusName });
  const deliverWebhook = createTaskFunction(ctx, workflowHandlers.deliverWebhook, {
    EVENT_BUS_NAME: eventBus.eventBusName,
  });
  eventBus.grantPutEventsTo(deliverWebhook);
  return { prepareJob, settleJob, deliverWebhook, eventBus };
}

/**
 * Work that stopped moving (a lost execution, a crashed unpacking) is restarted or failed, with its credits
 * released, every few minutes.
 */
export function createSweeper(
  ctx: ServiceContext,
  machines: { jobs: sfn.StateMachine; followUps: sfn.StateMachine; archives: sfn.StateMachine },
) {
  const sweep = createTaskFunction(
    ctx,
    sweeper.handler,
    {
      STATE_MACHINE_ARN: ctx.stateMachineArn,
      ARCHIVE_STATE_MACHINE_ARN: ctx.archiveStateMachineArn,
      FOLLOW_UP_STATE_MACHINE_ARN: machines.followUps.stateMachineArn,
    },
    sweeper,
    'Scheduled',
  );
  // The sweeper alone reads the index of unfinished work; no role may Scan the table.
  sweep.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: [`${ctx.data.table.tableArn}/index/${tableConfig.active.name}`],
    }),
  );
  const { rule } = new StuckWorkSweeper(ctx.scope, 'StuckWorkSweeper', { sweep, ...machines });
  acknowledge(rule, {
    'Serverless-EventBusDLQ':
      'A sweep that fails is made up by the next one five minutes later; a dead-letter queue would only hold ticks.',
  });
  return sweep;
}
