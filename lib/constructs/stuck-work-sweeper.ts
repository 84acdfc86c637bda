import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { sweeper } from '../config.ts';

export interface StuckWorkSweeperProps {
  /** The sweeper function (functions/scheduled/sweep-stuck/handler.ts), with table and bucket access. */
  sweep: lambda.IFunction;
  jobs: sfn.IStateMachine;
  /** The job runs' follow-ups: a job the sweeper fails gets its webhook and event from one. */
  followUps: sfn.IStateMachine;
  archives: sfn.IStateMachine;
}

/**
 * A schedule that runs the sweeper of stuck work (docs/runbook.md, Stuck work): it starts a lost job run
 * again (the job workflow is Express, whose executions cannot be described), hands a job it fails to the
 * run's follow-up for its webhook, and reads whether an archive task's execution exists before it starts
 * that again, and nothing else of the state machines.
 */
export class StuckWorkSweeper extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: StuckWorkSweeperProps) {
    super(scope, id);
    props.jobs.grantStartExecution(props.sweep);
    props.followUps.grantStartExecution(props.sweep);
    props.archives.grantStartExecution(props.sweep);
    props.archives.grantExecution(props.sweep, 'states:DescribeExecution');
    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Moves on jobs and batches that have not moved past their deadline',
      schedule: events.Schedule.rate(Duration.minutes(sweeper.everyMinutes)),
      targets: [new targets.LambdaFunction(props.sweep, { retryAttempts: 0 })],
    });
  }
}
