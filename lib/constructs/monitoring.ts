import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { telemetry } from '../../layers/core/telemetry-names.ts';

export const metricsNamespace = telemetry.metricsNamespace;
const { logMatches } = telemetry;

export interface PhotoJobsMonitoringProps {
  httpApi: apigwv2.HttpApi;
  jobStateMachine: sfn.StateMachine;
  /** The Standard machine job runs hand their long waits to (lib/constructs/job-workflow.ts). */
  jobFollowUps: sfn.StateMachine;
  /** Where the job state machine logs its transitions (the webhook give-ups are counted from it). */
  jobStateMachineLogs: logs.ILogGroup;
  archiveStateMachine: sfn.StateMachine;
  inferenceFunction: lambda.Function;
  /** The functions whose throttling stalls jobs: the workflow tasks and the inference function (at most 9). */
  backgroundFunctions: lambda.Function[];
  /** The sweeper's log group: each sweep that moved stuck work on logs `stuck work moved on`. */
  sweeperLogs?: logs.ILogGroup;
  inferenceTimeout: Duration;
  alarmTopic?: sns.ITopic;
}

/**
 * The service's alarms and its dashboard. Every alarm notifies `alarmTopic` when one is given; without
 * one they still show on the dashboard and in the console.
 */
export class PhotoJobsMonitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: PhotoJobsMonitoringProps) {
    super(scope, id);
    const period = Duration.minutes(5);
    const alarm = (alarmId: string, metric: cloudwatch.IMetric, options: Partial<cloudwatch.AlarmProps>) => {
      const created = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      if (props.alarmTopic) created.addAlarmAction(new actions.SnsAction(props.alarmTopic));
      this.alarms.push(created);
      return created;
    };

    // 1. Executions that failed: a follow-up fails only after its last-resort settlement gave up; a job run
    // only when its hand-over to one failed too.
    const failedJobs = new cloudwatch.MathExpression({
      expression: 'runs + followUps',
      usingMetrics: {
        runs: props.jobStateMachine.metricFailed({ period, statistic: 'Sum' }),
        followUps: props.jobFollowUps.metricFailed({ period, statistic: 'Sum' }),
      },
      period,
    });
    const failedArchives = props.archiveStateMachine.metricFailed({ period, statistic: 'Sum' });
    alarm('FailedExecutions', failedJobs, { alarmDescription: 'A job execution failed after every retry' });
    alarm('FailedArchiveTasks', failedArchives, {
      alarmDescription: 'A batch archive could not be unpacked or its download built',
    });

    // 2. Stuck work, as the sweeper finds it.
    const stuck = props.sweeperLogs
      ? new logs.MetricFilter(this, 'StuckWorkFilter', {
          logGroup: props.sweeperLogs,
          metricNamespace: metricsNamespace,
          metricName: logMatches.stuckWorkMovedOn.metric,
          filterPattern: logs.FilterPattern.stringValue(
            '$.message',
            '=',
            logMatches.stuckWorkMovedOn.message,
          ),
          metricValue: '1',
        }).metric({ period, statistic: 'Sum' })
      : undefined;
    if (stuck) alarm('StuckWork', stuck, { alarmDescription: 'The sweeper found jobs or batches stuck' });

    // 3. API 5xx rate, when there is traffic to speak of.
    const requests = props.httpApi.metricCount({ period, statistic: 'Sum' });
    const serverErrors = props.httpApi.metricServerError({ period, statistic: 'Sum' });
    const errorRate = new cloudwatch.MathExpression({
      expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
      usingMetrics: { requests, errors: serverErrors },
      label: 'API 5xx rate (%)',
      period,
    });
    alarm('Api5xxRate', errorRate, {
      threshold: 5,
      alarmDescription: 'More than 5% of API requests got a 5xx',
    });

    // 4. Throttled work: jobs wait or fail while their functions are throttled.
    const throttles = new cloudwatch.MathExpression({
      expression: props.backgroundFunctions.map((_, i) => `t${i}`).join(' + '),
      usingMetrics: Object.fromEntries(
        props.backgroundFunctions.map((fn, i) => [`t${i}`, fn.metricThrottles({ period, statistic: 'Sum' })]),
      ),
      label: 'Throttled invocations (workflow and inference)',
      period,
    });
    alarm('Throttles', throttles, { alarmDescription: 'Workflow or inference invocations were throttled' });

    // 5. Inference errors and its p95 duration against its timeout.
    const inferenceErrors = props.inferenceFunction.metricErrors({ period, statistic: 'Sum' });
    const inferenceP95 = props.inferenceFunction.metricDuration({ period, statistic: 'p95' });
    alarm('InferenceErrors', inferenceErrors, {
      threshold: 3,
      alarmDescription: 'The inference function failed 3 or more times in 5 minutes',
    });
    alarm('InferenceP95Duration', inferenceP95, {
      threshold: props.inferenceTimeout.toMilliseconds() * 0.8,
      evaluationPeriods: 3,
      alarmDescription: 'Inference p95 above 80% of its timeout for 15 minutes',
    });

    // 6. Webhook deliveries given up after the whole retry schedule (MarkDeliveryFailed entered).
    const givenUp = new logs.MetricFilter(this, 'WebhooksGivenUpFilter', {
      logGroup: props.jobStateMachineLogs,
      metricNamespace: metricsNamespace,
      metricName: logMatches.webhookGivenUp.metric,
      filterPattern: logs.FilterPattern.all(
        logs.FilterPattern.stringValue('$.type', '=', 'TaskStateEntered'),
        logs.FilterPattern.stringValue('$.details.name', '=', logMatches.webhookGivenUp.state),
      ),
      metricValue: '1',
    }).metric({ period, statistic: 'Sum' });
    alarm('WebhookDeliveriesGivenUp', givenUp, {
      alarmDescription: 'A webhook receiver did not accept a delivery through the whole retry schedule',
    });

    // 7. What the functions publish themselves (EMF, layers/aws/observability.ts), every dimension value
    // found by a search: jobs by operation and failure code, inference time by operation, webhook attempts.
    const published = (metric: string, dimensions: string, statistic: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${metricsNamespace},${dimensions}} MetricName="${metric}"', '${statistic}', ${period.toSeconds()})`,
        usingMetrics: {},
        label,
        period,
      });
    const names = telemetry.metrics;

    const graph = (title: string, ...metrics: cloudwatch.IMetric[]) =>
      new cloudwatch.GraphWidget({ title, left: metrics, width: 8, height: 6 });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${Stack.of(this).stackName}-${scope.node.id}`,
      widgets: [
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 })],
        [
          graph(
            'Job executions',
            props.jobStateMachine.metricSucceeded({ period, statistic: 'Sum' }),
            failedJobs,
            props.jobStateMachine.metricTimedOut({ period, statistic: 'Sum' }),
          ),
          graph('API requests and 5xx', requests, serverErrors),
          graph('API 5xx rate (%)', errorRate),
        ],
        [
          graph('Inference errors', inferenceErrors, props.inferenceFunction.metricInvocations({ period })),
          graph(
            'Inference duration',
            props.inferenceFunction.metricDuration({ period, statistic: 'p50' }),
            inferenceP95,
          ),
          graph('Throttles', throttles),
        ],
        [
          graph(
            'Jobs created and succeeded, by operation',
            published(names.jobsCreated, 'operation,service', 'Sum', 'Created'),
            published(names.jobsSucceeded, 'operation,service', 'Sum', 'Succeeded'),
          ),
          graph(
            'Jobs failed, by operation and code',
            published(names.jobsFailed, 'code,operation,service', 'Sum', 'Failed'),
          ),
          graph(
            'Inference p95 (ms), by operation',
            published(names.inferenceDuration, 'operation,service', 'p95', 'p95'),
          ),
        ],
        [
          graph(
            'Webhook attempts, by outcome',
            published(names.webhookAttempts, 'outcome,service', 'Sum', 'Attempts'),
          ),
          graph('Webhook deliveries given up', givenUp),
          graph('Archive tasks failed', failedArchives),
        ],
        ...(stuck ? [[graph('Stuck work moved on by the sweeper', stuck)]] : []),
      ],
    });
  }
}
