import { ArnFormat, CfnOutput, CfnParameter, Duration, Size, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import {
  apiFunction,
  archiveFunction,
  bucketPrefixes,
  inference,
  pageRoutes,
  repoRoot,
  routes,
  sweeper,
  workflowFunction,
  workflowHandlers,
} from '../config.ts';
import { ArchiveWorkflow } from '../constructs/archive-workflow.ts';
import {
  createHandlerFunction,
  createMissingHandlerFunction,
  type HandlerFunctionProps,
  handlerExists,
  tagHandler,
} from '../constructs/handler-function.ts';
import { JobWorkflow } from '../constructs/job-workflow.ts';
import { createLogGroup } from '../constructs/log-group.ts';
import { StuckWorkSweeper } from '../constructs/stuck-work-sweeper.ts';

export interface ServiceStackProps extends StackProps {
  table: dynamodb.ITable;
  bucket: s3.IBucket;
}

/** `functions/api/get-job/handler.ts` -> `GetJob`. */
const constructIdOf = (handler: string): string =>
  (handler.split('/').at(-2) ?? handler)
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** The HTTP API, one Lambda per API handler file, the job workflow and its task functions. */
export class ServiceStack extends Stack {
  readonly httpApi: apigwv2.HttpApi;
  readonly stateMachine: sfn.StateMachine;
  /** API functions by repo-relative handler path; only handlers present at synth time appear. */
  readonly apiFunctions: ReadonlyMap<string, lambda.IFunction>;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const { table, bucket } = props;

    // Only the key's sha256 is deployed: it cannot be turned back into the key, so the template and the
    // function configuration hold nothing that grants access. Empty disables the master key.
    const masterKeySha256 = new CfnParameter(this, 'MasterKeySha256', {
      type: 'String',
      default: '',
      noEcho: true,
      allowedPattern: '^([0-9a-f]{64})?$',
      description: 'sha256 (hex) of the master API key; empty disables it',
    });

    // Named, so that its ARN is known before it exists: the task functions get STATE_MACHINE_ARN without a
    // dependency cycle (the state machine depends on them).
    const stateMachineName = `${this.stackName}-jobs`;
    const stateMachineArn = this.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const archiveStateMachineName = `${this.stackName}-archives`;
    const archiveStateMachineArn = this.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: archiveStateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const environment = (smArn: string): Record<string, string> => ({
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      STATE_MACHINE_ARN: smArn,
      ARCHIVE_STATE_MACHINE_ARN: archiveStateMachineArn,
      MASTER_KEY_SHA256: masterKeySha256.valueAsString,
      NODE_OPTIONS: '--enable-source-maps',
    });
    const grantData = (grantee: iam.IGrantable) => {
      table.grantReadWriteData(grantee);
      for (const { prefix } of Object.values(bucketPrefixes)) bucket.grantReadWrite(grantee, `${prefix}*`);
    };

    // Workflow tasks keep a role each: they need no access to the state machine, and the
    // inference function handles untrusted images.
    const createWorkflowFunction = (
      handler: string,
      extra: Record<string, string> = {},
      size: { memoryMiB: number; timeoutSeconds: number } = workflowFunction,
    ): lambda.Function => {
      const fnProps: HandlerFunctionProps = {
        handler,
        environment: { ...environment(stateMachineArn), ...extra },
        memorySize: size.memoryMiB,
        timeout: Duration.seconds(size.timeoutSeconds),
      };
      const id = `Workflow${constructIdOf(handler)}`;
      const fn = handlerExists(handler)
        ? createHandlerFunction(this, id, fnProps)
        : createMissingHandlerFunction(this, id, fnProps);
      grantData(fn);
      return fn;
    };
    const prepareJob = createWorkflowFunction(workflowHandlers.prepareJob);
    const settleJob = createWorkflowFunction(workflowHandlers.settleJob);
    // The one exception: settling a batch item starts the batch's next item (docs/decisions.md, Batches).
    // By ARN, as for STATE_MACHINE_ARN: the state machine depends on this function.
    settleJob.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] }),
    );

    // Job terminal events go to a bus of the service's own, so that rules for them need no filter on
    // everything else an account sends to its default bus.
    const eventBus = new events.EventBus(this, 'JobEvents', { eventBusName: `${this.stackName}-jobs` });
    const deliverWebhook = createWorkflowFunction(workflowHandlers.deliverWebhook, {
      EVENT_BUS_NAME: eventBus.eventBusName,
    });
    eventBus.grantPutEventsTo(deliverWebhook);

    const runInference = new lambda.DockerImageFunction(this, 'Inference', {
      code: lambda.DockerImageCode.fromImageAsset(repoRoot, {
        file: inference.dockerfile,
        exclude: [...inference.contextExcludes],
        platform: Platform.LINUX_ARM64,
      }),
      architecture: lambda.Architecture.ARM_64,
      memorySize: inference.memoryMiB,
      timeout: Duration.seconds(inference.timeoutSeconds),
      ephemeralStorageSize: Size.gibibytes(inference.ephemeralStorageGiB),
      environment: { ...environment(stateMachineArn), MODELS_DIR: inference.modelsDir },
      logGroup: createLogGroup(this, 'InferenceLogs'),
    });
    tagHandler(runInference, inference.handler);
    grantData(runInference);

    const { stateMachine } = new JobWorkflow(this, 'JobWorkflow', {
      prepareJob,
      runInference,
      settleJob,
      deliverWebhook,
      stateMachineName,
    });
    this.stateMachine = stateMachine;

    // Unpacking a batch starts its first items (the job state machine); the API starts its executions.
    const batchArchive = createWorkflowFunction(workflowHandlers.batchArchive, {}, archiveFunction);
    stateMachine.grantStartExecution(batchArchive);
    const archiveWorkflow = new ArchiveWorkflow(this, 'ArchiveWorkflow', {
      batchArchive,
      stateMachineName: archiveStateMachineName,
    });
    new StuckWorkSweeper(this, 'StuckWorkSweeper', {
      sweep: createWorkflowFunction(sweeper.handler, {}, sweeper),
      jobs: stateMachine,
      archives: archiveWorkflow.stateMachine,
    });

    // One role for all API functions: they are one surface with one set of needs, and a copy of the same
    // policy per function would only hide a difference if one crept in.
    const apiRole = new iam.Role(this, 'ApiFunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole'),
      ],
    });
    grantData(apiRole);
    stateMachine.grantStartExecution(apiRole);
    stateMachine.grantExecution(apiRole, 'states:StopExecution');
    archiveWorkflow.stateMachine.grantStartExecution(apiRole);
    archiveWorkflow.stateMachine.grantExecution(apiRole, 'states:DescribeExecution');

    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      apiName: 'photo-jobs',
      description: 'Photo Processing Jobs API',
      corsPreflight: {
        allowOrigins: ['*'],
        allowMethods: [apigwv2.CorsHttpMethod.ANY],
        allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'x-api-key'],
        maxAge: Duration.hours(1),
      },
    });

    const apiFunctions = new Map<string, lambda.IFunction>();
    const integrations = new Map<string, HttpLambdaIntegration>();
    for (const route of [...routes, ...pageRoutes]) {
      // Handlers are written alongside this stack; a route appears once its file exists.
      if (!handlerExists(route.handler)) continue;
      let integration = integrations.get(route.handler);
      if (!integration) {
        const id = `Api${constructIdOf(route.handler)}`;
        const fn = createHandlerFunction(this, id, {
          handler: route.handler,
          environment: environment(stateMachine.stateMachineArn),
          memorySize: apiFunction.memoryMiB,
          timeout: Duration.seconds(apiFunction.timeoutSeconds),
          role: apiRole,
        });
        apiFunctions.set(route.handler, fn);
        integration = new HttpLambdaIntegration(`${id}Integration`, fn, {
          payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
        });
        integrations.set(route.handler, integration);
      }
      this.httpApi.addRoutes({
        path: route.path,
        methods: [apigwv2.HttpMethod[route.method]],
        integration,
      });
    }
    this.apiFunctions = apiFunctions;

    new CfnOutput(this, 'ApiUrl', { value: this.httpApi.apiEndpoint });
    new CfnOutput(this, 'StateMachineArn', { value: stateMachine.stateMachineArn });
    new CfnOutput(this, 'EventBusName', { value: eventBus.eventBusName });
  }
}
