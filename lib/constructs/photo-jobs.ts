import { ArnFormat, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { telemetry } from '../../layers/core/telemetry-names.ts';
import { inference, type workflowHandlers } from '../config.ts';
import { acknowledgeWildcardResources } from './acknowledge.ts';
import { type ApiThrottle, createApi } from './api.ts';
import { createArchive } from './archive.ts';
import { dataAccess, serviceObjectPatterns } from './bucket-access.ts';
import { sourceMapsEnvironment } from './handler-function.ts';
import { createInferenceFunction, type InferenceProps } from './inference-function.ts';
import { JobWorkflow, type WebhookRetrySchedule } from './job-workflow.ts';
import type { MasterKey } from './master-key.ts';
import { PhotoJobsMonitoring } from './monitoring.ts';
import { PhotoJobsData } from './photo-jobs-data.ts';
import { createJobTasks, createSweeper, type ServiceContext } from './task-functions.ts';
import { acknowledgeTracing, defaultTracing, type TracingMode } from './tracing.ts';

export { type ApiThrottle, defaultApiThrottle } from './api.ts';

export interface PhotoJobsProps {
  /**
   * Reuse a table instead of creating one. It must have the key schema of `PhotoJobsData`: string `pk`
   * and `sk`, the indexes `gsi1` (`gsi1pk`, `gsi1sk`) and `active` (`active_pk`, `active_sk`), both with all
   * attributes, and TTL on `ttl`.
   */
  existingTable?: dynamodb.ITable;
  /** Reuse a bucket instead of creating one; the service keeps its objects under its own prefixes. */
  existingBucket?: s3.IBucket;
  /** Publish job events on this bus instead of one of the service's own. */
  existingEventBus?: events.IEventBus;
  /** Throttling of the API stage. Default 100 requests per second, bursts of 200. */
  apiThrottle?: ApiThrottle;
  /** For the table and the bucket this construct creates. Default RETAIN. */
  removalPolicy?: RemovalPolicy;
  /** Default `MasterKey.none()`: only API keys (the CLI creates them) and guests. */
  masterKey?: MasterKey;
  /** The inference function: memory, CPU architecture (the image is built for it), reserved concurrency, model mirror. */
  inference?: InferenceProps;
  /** Of every log group the construct creates. Default one month. */
  logRetention?: logs.RetentionDays;
  /** Alarms notify this topic. Without one the alarms exist and show on the dashboard only. */
  alarmTopic?: sns.ITopic;
  /** Retries of a webhook delivery. Default: the service's schedule, about 11 hours in all (docs/webhooks.md). */
  webhookRetrySchedule?: WebhookRetrySchedule;
  /**
   * Stack traces that name the TypeScript sources: each zip bundle carries its source map and every function
   * runs with `--enable-source-maps`. Default off: reading the maps adds 40-70 ms of CPU to every cold start
   * (`npm run bench -- coldstart`), and a minified trace still names the function and the error.
   */
  sourceMaps?: boolean;
  /** X-Ray on the functions and state machines: `off` (the default) or `sampled` (lib/constructs/tracing.ts). */
  tracing?: TracingMode;
}

/**
 * The Photo Processing Jobs service in one construct: HTTP API (one Lambda per endpoint), the job
 * workflow (Step Functions) with its task functions, the inference function (container image), job
 * events on EventBridge, and the table and bucket unless existing ones are passed.
 *
 * ```ts
 * const jobs = new PhotoJobs(stack, 'Jobs', { apiThrottle: { rate: 50, burst: 100 } });
 * new CfnOutput(stack, 'ApiUrl', { value: jobs.apiUrl });
 * ```
 */
export class PhotoJobs extends Construct {
  /** `https://{api-id}.execute-api.{region}.amazonaws.com`; the routes are under `/api/v1`. */
  readonly apiUrl: string;
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  readonly stateMachine: sfn.StateMachine;
  /** Unpacks batch archives and builds their downloads. */
  readonly archiveStateMachine: sfn.StateMachine;
  /** The scheduled sweeper of stuck work. */
  readonly sweeperFunction: lambda.Function;
  readonly eventBus: events.IEventBus;
  readonly inferenceFunction: lambda.DockerImageFunction;
  readonly httpApi: apigwv2.HttpApi;
  /** API functions by repo-relative handler path. */
  readonly apiFunctions: ReadonlyMap<string, lambda.IFunction>;
  /** The state machine's task functions by task: prepareJob, settleJob, deliverWebhook. */
  readonly workflowFunctions: Readonly<Record<keyof typeof workflowHandlers, lambda.Function>>;
  /** Alarms (to `alarmTopic` when given) and the dashboard. */
  readonly monitoring: PhotoJobsMonitoring;
  /** Created here when no `existingTable`/`existingBucket` was given. */
  readonly data?: PhotoJobsData;

  constructor(scope: Construct, id: string, props: PhotoJobsProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const tracing = props.tracing ?? defaultTracing;

    if (!props.existingTable || !props.existingBucket) {
      this.data = new PhotoJobsData(this, 'Data', { removalPolicy: props.removalPolicy });
    }
    this.table = props.existingTable ?? this.data!.table;
    this.bucket = props.existingBucket ?? this.data!.bucket;

    // Named, so that its ARN is known before it exists: the task functions get STATE_MACHINE_ARN without a
    // dependency cycle (the state machine depends on them).
    const stateMachineName = `${stack.stackName}-${id}-jobs`;
    const archiveStateMachineName = `${stack.stackName}-${id}-archives`;
    const followUpStateMachineName = `${stack.stackName}-${id}-job-follow-ups`;
    const arnOf = (name: string) =>
      stack.formatArn({
        service: 'states',
        resource: 'stateMachine',
        resourceName: name,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const ctx: ServiceContext = {
      scope: this,
      data: dataAccess(this.table, this.bucket),
      // Powertools (layers/aws/observability.ts) reads these: JSON logs at INFO, EMF metrics in the namespace
      // the alarms and dashboard read, X-Ray traces where `tracing` is on.
      common: {
        ...(props.sourceMaps ? sourceMapsEnvironment : {}),
        POWERTOOLS_SERVICE_NAME: telemetry.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: telemetry.metricsNamespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      },
      logRetention: props.logRetention,
      tracing,
      stateMachineArn: arnOf(stateMachineName),
      archiveStateMachineArn: arnOf(archiveStateMachineName),
    };

    const { prepareJob, settleJob, deliverWebhook, eventBus } = createJobTasks(
      ctx,
      stateMachineName,
      props.existingEventBus,
    );
    this.eventBus = eventBus;
    this.inferenceFunction = createInferenceFunction(ctx, props.inference);
    const jobWorkflow = new JobWorkflow(this, 'JobWorkflow', {
      prepareJob,
      runInference: this.inferenceFunction,
      settleJob,
      deliverWebhook,
      stateMachineName,
      followUpStateMachineName,
      webhookRetrySchedule: props.webhookRetrySchedule,
      logRetention: props.logRetention,
      tracing,
    });
    this.stateMachine = jobWorkflow.stateMachine;

    const archive = createArchive(ctx, archiveStateMachineName);
    this.archiveStateMachine = archive.workflow.stateMachine;
    this.workflowFunctions = { prepareJob, settleJob, deliverWebhook, batchArchive: archive.batchArchive };
    this.sweeperFunction = createSweeper(ctx, {
      jobs: this.stateMachine,
      followUps: jobWorkflow.followUps,
      archives: this.archiveStateMachine,
    });

    const api = createApi(ctx, {
      apiName: `${stack.stackName}-${id}`,
      jobs: this.stateMachine,
      archives: this.archiveStateMachine,
      throttle: props.apiThrottle,
      masterKey: props.masterKey,
    });
    this.httpApi = api.httpApi;
    this.apiFunctions = api.functions;
    this.apiUrl = this.httpApi.apiEndpoint;

    this.monitoring = new PhotoJobsMonitoring(this, 'Monitoring', {
      httpApi: this.httpApi,
      jobStateMachine: this.stateMachine,
      jobFollowUps: jobWorkflow.followUps,
      jobStateMachineLogs: jobWorkflow.logGroup,
      archiveStateMachine: this.archiveStateMachine,
      inferenceFunction: this.inferenceFunction,
      backgroundFunctions: [...Object.values(this.workflowFunctions), this.inferenceFunction],
      sweeperLogs: this.sweeperFunction.logGroup,
      inferenceTimeout: Duration.seconds(inference.timeoutSeconds),
      alarmTopic: props.alarmTopic,
    });

    acknowledgeTracing(this, tracing);

    acknowledgeWildcardResources(this, [
      [/^\*$/, 'X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions.'],
      [
        serviceObjectPatterns,
        'Objects under one of the service prefixes of its bucket; their keys carry ids made at run time.',
      ],
      [
        /\.Arn>:\*$/,
        'Invoking a task function: any version or alias of that one function (Step Functions grant).',
      ],
      [
        /:execution:.*:\*$/,
        'Executions of the service’s own state machines only: stopping a cancelled job, reading an archive task or a stuck job’s state.',
      ],
    ]);
  }
}
