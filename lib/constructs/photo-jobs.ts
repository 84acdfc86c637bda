import { ArnFormat, Duration, type RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { telemetry } from '../../layers/core/telemetry-names.ts';
import {
  apiFunction,
  archiveFunction,
  bucketPrefixes,
  inference,
  inferenceContextExcludes,
  pageRoutes,
  repoRoot,
  routes,
  sweeper,
  table as tableConfig,
  workflowFunction,
  workflowHandlers,
} from '../config.ts';
import { acknowledge, acknowledgeWildcardResources } from './acknowledge.ts';
import { ArchiveWorkflow } from './archive-workflow.ts';
import {
  acknowledgeBasicExecutionRole,
  acknowledgeFunctionFindings,
  createHandlerFunction,
  createMissingHandlerFunction,
  type HandlerFunctionProps,
  handlerExists,
  tagHandler,
} from './handler-function.ts';
import { JobWorkflow, type WebhookRetrySchedule } from './job-workflow.ts';
import { createLogGroup } from './log-group.ts';
import { MasterKey } from './master-key.ts';
import { PhotoJobsMonitoring } from './monitoring.ts';
import { PhotoJobsData } from './photo-jobs-data.ts';
import { StuckWorkSweeper } from './stuck-work-sweeper.ts';

export interface ApiThrottle {
  /** Steady requests per second for the whole stage. */
  rate: number;
  /** Requests allowed in a burst above the rate. */
  burst: number;
}

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
  inference?: {
    /** MiB; default 3008. The models need about 1.5 GB at peak. */
    memorySize?: number;
    /** Default ARM_64; the image is built for the same platform. */
    architecture?: lambda.Architecture;
    /**
     * Reserved concurrency: the most inference runs at once, kept apart from what the API needs. Default
     * `inference.reservedConcurrency` in lib/config.ts; `null` reserves nothing (an account whose quota
     * is under 100 plus this cannot reserve any: docs/deploy.md).
     */
    reservedConcurrency?: number | null;
    /**
     * A mirror the image build fetches the model files from (`<base>/<file name>`, https) instead of their
     * official hosts, passed as the Dockerfile's MODELS_BASE_URL build argument. Default: MODELS_BASE_URL
     * in the environment of the synth, else none (the official hosts).
     */
    modelsBaseUrl?: string;
  };
  /** Of every log group the construct creates. Default one month. */
  logRetention?: logs.RetentionDays;
  /** Alarms notify this topic. Without one the alarms exist and show on the dashboard only. */
  alarmTopic?: sns.ITopic;
  /** Retries of a webhook delivery; default 7 retries over about 11 hours (lib/config.ts). */
  webhookRetrySchedule?: WebhookRetrySchedule;
}

export const defaultApiThrottle: ApiThrottle = { rate: 100, burst: 200 };

/** `functions/api/get-job/handler.ts` -> `GetJob`. */
const constructIdOf = (handler: string): string =>
  (handler.split('/').at(-2) ?? handler)
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** Table actions of the service's own code (layers/aws/dynamodb-*.ts); never Scan, never `dynamodb:*`. */
const tableActions = {
  workflow: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ],
  /** Plus deleting a file's records and writing a batch's items in bulk. */
  api: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
};

/** A key pattern in one of the bucket's areas (layers/core/storage-layout.ts): everything in it by default. */
const objectsIn = (area: keyof typeof bucketPrefixes, rest = '*') => `${bucketPrefixes[area].prefix}${rest}`;

/** What the inference function reads and writes in the bucket (docs/decisions.md, Least privilege). */
export const inferenceObjectAccess = {
  read: [
    objectsIn('sources'),
    objectsIn('assets'),
    objectsIn('uploads'),
    // A batch item's photo, and a key's stored background.
    objectsIn('batches', '*/items/*'),
    objectsIn('keys', '*/background.*'),
    objectsIn('cache'),
  ],
  write: [objectsIn('results'), objectsIn('cache')],
} as const;

/** What the batch archive task reads and writes in the bucket. */
export const batchArchiveObjectAccess = {
  read: [objectsIn('uploads'), objectsIn('batches'), objectsIn('results')],
  write: [objectsIn('batches')],
} as const;

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
  /** The scheduled sweeper of stuck work, once its handler exists. */
  readonly sweeperFunction?: lambda.Function;
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
    const logRetention = props.logRetention;

    if (!props.existingTable || !props.existingBucket) {
      this.data = new PhotoJobsData(this, 'Data', { removalPolicy: props.removalPolicy });
    }
    const table = props.existingTable ?? this.data!.table;
    const bucket = props.existingBucket ?? this.data!.bucket;
    this.table = table;
    this.bucket = bucket;

    // Named, so that its ARN is known before it exists: the task functions get STATE_MACHINE_ARN without a
    // dependency cycle (the state machine depends on them).
    const stateMachineName = `${stack.stackName}-${id}-jobs`;
    const archiveStateMachineName = `${stack.stackName}-${id}-archives`;
    const arnOf = (name: string) =>
      stack.formatArn({
        service: 'states',
        resource: 'stateMachine',
        resourceName: name,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const stateMachineArn = arnOf(stateMachineName);
    const archiveStateMachineArn = arnOf(archiveStateMachineName);
    // Powertools (layers/aws/observability.ts) reads these: JSON logs at INFO, EMF metrics in the namespace
    // the alarms and dashboard read, X-Ray traces (active tracing is on for every function).
    const common = {
      NODE_OPTIONS: '--enable-source-maps',
      POWERTOOLS_SERVICE_NAME: telemetry.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: telemetry.metricsNamespace,
      POWERTOOLS_LOG_LEVEL: 'INFO',
    };

    const grantTable = (grantee: iam.IGrantable, actions: string[]) => {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions,
          resources: [table.tableArn, `${table.tableArn}/index/${tableConfig.gsi1.name}`],
        }),
      );
      table.encryptionKey?.grantEncryptDecrypt(grantee);
    };
    const grantObjects = (grantee: iam.IGrantable, actions: string[], patterns: readonly string[]) => {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions,
          resources: patterns.map((pattern) => bucket.arnForObjects(pattern)),
        }),
      );
      // S3 answers a read of a missing key with 403 AccessDenied, not 404, to a caller without s3:ListBucket
      // on the bucket: every "does it exist yet" check (the inference cache, a batch's download, an upload)
      // would fail as a denial. Listing is allowed only under the prefixes the role reads.
      if (actions.includes('s3:GetObject')) {
        grantee.grantPrincipal.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: ['s3:ListBucket'],
            resources: [bucket.bucketArn],
            conditions: { StringLike: { 's3:prefix': [...patterns] } },
          }),
        );
      }
    };

    // Each task function has a role of its own with what its task needs: none reaches the bucket.
    const createWorkflowFunction = (
      handler: string,
      environment: Record<string, string>,
      size: { memoryMiB: number; timeoutSeconds: number } = workflowFunction,
      idPrefix = 'Workflow',
    ) => {
      const fnProps: HandlerFunctionProps = {
        handler,
        environment: { ...common, TABLE_NAME: table.tableName, ...environment },
        memorySize: size.memoryMiB,
        timeout: Duration.seconds(size.timeoutSeconds),
        logRetention,
      };
      const fnId = `${idPrefix}${constructIdOf(handler)}`;
      const fn = handlerExists(handler)
        ? createHandlerFunction(this, fnId, fnProps)
        : createMissingHandlerFunction(this, fnId, fnProps);
      grantTable(fn, tableActions.workflow);
      return fn;
    };
    const prepareJob = createWorkflowFunction(workflowHandlers.prepareJob, {});
    // Settling a batch item starts the batch's next item (docs/decisions.md, Batches). By ARN: the state
    // machine depends on this function.
    const settleJob = createWorkflowFunction(workflowHandlers.settleJob, {
      STATE_MACHINE_ARN: stateMachineArn,
    });
    settleJob.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] }),
    );

    // Job terminal events go to a bus of the service's own unless one is given, so that rules for them
    // need no filter on everything else an account sends to its default bus.
    this.eventBus =
      props.existingEventBus ?? new events.EventBus(this, 'JobEvents', { eventBusName: stateMachineName });
    const deliverWebhook = createWorkflowFunction(workflowHandlers.deliverWebhook, {
      EVENT_BUS_NAME: this.eventBus.eventBusName,
    });
    this.eventBus.grantPutEventsTo(deliverWebhook);

    // The inference function handles untrusted images: no table, and only the object prefixes it reads and
    // writes (inferenceObjectAccess).
    const architecture = props.inference?.architecture ?? lambda.Architecture.ARM_64;
    // Only when set: a build argument is part of the asset's hash, and an empty one changes nothing.
    const modelsBaseUrl = props.inference?.modelsBaseUrl ?? (process.env.MODELS_BASE_URL || undefined);
    this.inferenceFunction = new lambda.DockerImageFunction(this, 'Inference', {
      code: lambda.DockerImageCode.fromImageAsset(repoRoot, {
        file: inference.dockerfile,
        exclude: [...inferenceContextExcludes],
        buildArgs: modelsBaseUrl ? { MODELS_BASE_URL: modelsBaseUrl } : undefined,
        platform: architecture === lambda.Architecture.X86_64 ? Platform.LINUX_AMD64 : Platform.LINUX_ARM64,
      }),
      architecture,
      memorySize: props.inference?.memorySize ?? inference.memoryMiB,
      timeout: Duration.seconds(inference.timeoutSeconds),
      ephemeralStorageSize: Size.gibibytes(inference.ephemeralStorageGiB),
      environment: {
        ...common,
        ...inference.processEnvironment,
        BUCKET_NAME: bucket.bucketName,
        MODELS_DIR: inference.modelsDir,
      },
      logGroup: createLogGroup(this, 'InferenceLogs', logRetention),
      tracing: lambda.Tracing.ACTIVE,
      reservedConcurrentExecutions:
        props.inference?.reservedConcurrency === null
          ? undefined
          : (props.inference?.reservedConcurrency ?? inference.reservedConcurrency),
    });
    tagHandler(this.inferenceFunction, inference.handler);
    acknowledgeFunctionFindings(this.inferenceFunction);
    grantObjects(this.inferenceFunction, ['s3:GetObject'], inferenceObjectAccess.read);
    grantObjects(this.inferenceFunction, ['s3:PutObject'], inferenceObjectAccess.write);
    bucket.encryptionKey?.grantEncryptDecrypt(this.inferenceFunction);

    const jobWorkflow = new JobWorkflow(this, 'JobWorkflow', {
      prepareJob,
      runInference: this.inferenceFunction,
      settleJob,
      deliverWebhook,
      stateMachineName,
      webhookRetrySchedule: props.webhookRetrySchedule,
      logRetention,
    });
    const { stateMachine } = jobWorkflow;
    this.stateMachine = stateMachine;

    // Unpacking a batch's archive (and building its download) takes minutes: a task of its own workflow.
    // It starts the batch's first items.
    const batchArchive = createWorkflowFunction(
      workflowHandlers.batchArchive,
      {
        BUCKET_NAME: bucket.bucketName,
        STATE_MACHINE_ARN: stateMachineArn,
        ARCHIVE_STATE_MACHINE_ARN: archiveStateMachineArn,
      },
      archiveFunction,
    );
    grantTable(batchArchive, ['dynamodb:BatchWriteItem']);
    grantObjects(batchArchive, ['s3:GetObject'], batchArchiveObjectAccess.read);
    grantObjects(batchArchive, ['s3:PutObject', 's3:AbortMultipartUpload'], batchArchiveObjectAccess.write);
    batchArchive.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [stateMachineArn, archiveStateMachineArn],
      }),
    );
    bucket.encryptionKey?.grantEncryptDecrypt(batchArchive);
    const archiveWorkflow = new ArchiveWorkflow(this, 'ArchiveWorkflow', {
      batchArchive,
      stateMachineName: archiveStateMachineName,
      logRetention,
    });
    this.archiveStateMachine = archiveWorkflow.stateMachine;
    this.workflowFunctions = { prepareJob, settleJob, deliverWebhook, batchArchive };

    // Work that stopped moving (a lost execution, a crashed unpacking) is restarted or failed, with its
    // credits released, every few minutes.
    if (handlerExists(sweeper.handler)) {
      const sweep = createWorkflowFunction(
        sweeper.handler,
        { STATE_MACHINE_ARN: stateMachineArn, ARCHIVE_STATE_MACHINE_ARN: archiveStateMachineArn },
        sweeper,
        'Scheduled',
      );
      // The sweeper alone reads the index of unfinished work; no role may Scan the table.
      sweep.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: [`${table.tableArn}/index/${tableConfig.active.name}`],
        }),
      );
      const { rule } = new StuckWorkSweeper(this, 'StuckWorkSweeper', {
        sweep,
        jobs: stateMachine,
        archives: archiveWorkflow.stateMachine,
      });
      acknowledge(rule, {
        'Serverless-EventBusDLQ':
          'A sweep that fails is made up by the next one five minutes later; a dead-letter queue would only hold ticks.',
      });
      this.sweeperFunction = sweep;
    }

    // One role for all API functions: they are one surface with one set of needs, and a copy of the same
    // policy per function would only hide a difference if one crept in.
    const apiRole = new iam.Role(this, 'ApiFunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole'),
      ],
    });
    acknowledgeBasicExecutionRole(apiRole);
    grantTable(apiRole, tableActions.api);
    grantObjects(
      apiRole,
      ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
      Object.values(bucketPrefixes).map(({ prefix }) => `${prefix}*`),
    );
    bucket.encryptionKey?.grantEncryptDecrypt(apiRole);
    stateMachine.grantStartExecution(apiRole);
    stateMachine.grantExecution(apiRole, 'states:StopExecution');
    archiveWorkflow.stateMachine.grantStartExecution(apiRole);
    archiveWorkflow.stateMachine.grantExecution(apiRole, 'states:DescribeExecution');
    const masterKeyEnvironment = (props.masterKey ?? MasterKey.none()).bind(apiRole);

    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      apiName: `${stack.stackName}-${id}`,
      description: 'Photo Processing Jobs API',
      corsPreflight: {
        allowOrigins: ['*'],
        allowMethods: [apigwv2.CorsHttpMethod.ANY],
        allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'x-api-key'],
        maxAge: Duration.hours(1),
      },
    });
    const throttle = props.apiThrottle ?? defaultApiThrottle;
    const accessLogs = createLogGroup(this, 'ApiAccessLogs', logRetention);
    const stage = this.httpApi.defaultStage!.node.defaultChild as apigwv2.CfnStage;
    stage.defaultRouteSettings = {
      throttlingRateLimit: throttle.rate,
      throttlingBurstLimit: throttle.burst,
    };
    stage.accessLogSettings = {
      destinationArn: accessLogs.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        requestTime: '$context.requestTime',
        routeKey: '$context.routeKey',
        status: '$context.status',
        responseLength: '$context.responseLength',
        latency: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      }),
    };

    const apiFunctions = new Map<string, lambda.IFunction>();
    const integrations = new Map<string, HttpLambdaIntegration>();
    const apiEnvironment = {
      ...common,
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      STATE_MACHINE_ARN: stateMachine.stateMachineArn,
      ARCHIVE_STATE_MACHINE_ARN: archiveWorkflow.stateMachine.stateMachineArn,
      ...masterKeyEnvironment,
    };
    for (const route of [...routes, ...pageRoutes]) {
      // Handlers are written alongside the construct; a route appears once its file exists.
      if (!handlerExists(route.handler)) continue;
      let integration = integrations.get(route.handler);
      if (!integration) {
        const fnId = `Api${constructIdOf(route.handler)}`;
        const fn = createHandlerFunction(this, fnId, {
          handler: route.handler,
          environment: apiEnvironment,
          memorySize: apiFunction.memoryMiB,
          timeout: Duration.seconds(apiFunction.timeoutSeconds),
          role: apiRole,
          logRetention,
        });
        apiFunctions.set(route.handler, fn);
        integration = new HttpLambdaIntegration(`${fnId}Integration`, fn, {
          payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
        });
        integrations.set(route.handler, integration);
      }
      // HEAD wherever GET works (a route matches one method only): the handler answers it as GET, bodiless.
      const methods = route.method === 'GET' ? [apigwv2.HttpMethod.GET, apigwv2.HttpMethod.HEAD] : [];
      this.httpApi.addRoutes({
        path: route.path,
        methods: methods.length ? methods : [apigwv2.HttpMethod[route.method]],
        integration,
      });
    }
    this.apiFunctions = apiFunctions;
    this.apiUrl = this.httpApi.apiEndpoint;
    acknowledge(this.httpApi, {
      'AwsSolutions-APIG4':
        'The functions authenticate every request themselves (API key, master key or guest session, spec 5); ' +
        'result links and the OpenAPI document are public by design.',
    });

    this.monitoring = new PhotoJobsMonitoring(this, 'Monitoring', {
      httpApi: this.httpApi,
      jobStateMachine: stateMachine,
      jobStateMachineLogs: jobWorkflow.logGroup,
      archiveStateMachine: archiveWorkflow.stateMachine,
      inferenceFunction: this.inferenceFunction,
      backgroundFunctions: [...Object.values(this.workflowFunctions), this.inferenceFunction],
      sweeperLogs: this.sweeperFunction?.logGroup,
      inferenceTimeout: Duration.seconds(inference.timeoutSeconds),
      alarmTopic: props.alarmTopic,
    });

    acknowledgeWildcardResources(this, [
      [/^\*$/, 'X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions.'],
      [
        /\/(sources|assets|uploads|results|cache|batches|keys)\/\*$|\/batches\/\*\/items\/\*$|\/keys\/\*\/background\.\*$/,
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
