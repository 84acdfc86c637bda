import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { EXPOSED_RESPONSE_HEADERS } from '../../layers/core/exposed-headers.ts';
import { apiFunction, methodsOf, noRouteFunction, pageRoutes, routes } from '../config.ts';
import { acknowledge } from './acknowledge.ts';
import { apiObjectAccess, tableActions } from './bucket-access.ts';
import { acknowledgeBasicExecutionRole, constructIdOf, createHandlerFunction } from './handler-function.ts';
import { createLogGroup } from './log-group.ts';
import { MasterKey } from './master-key.ts';
import type { ServiceContext } from './task-functions.ts';

export interface ApiThrottle {
  /** Steady requests per second for the whole stage. */
  rate: number;
  /** Requests allowed in a burst above the rate. */
  burst: number;
}

/**
 * The stage's limit is shared by every client, so it sits far above one client's own (RATE_LIMIT_KEY_*,
 * counted by the functions): a key flooding at 20 times its allowance is refused by the functions and
 * leaves the stage room for everyone else. It still caps what a flood can cost.
 */
export const defaultApiThrottle: ApiThrottle = { rate: 5000, burst: 5000 };

export interface ApiProps {
  apiName: string;
  jobs: sfn.StateMachine;
  archives: sfn.StateMachine;
  throttle?: ApiThrottle;
  masterKey?: MasterKey;
}

/**
 * Without a `$default` route API Gateway answers a request no route matches itself, `{"message":"Not Found"}`,
 * and never 405. This route sends it to a function of its own that answers in the spec's error body: 404 for
 * an unknown path, 405 with `Allow` for a known one. Its role may only write its logs: it reads the route
 * table from its code and calls nothing.
 */
function addNoRoute(ctx: ServiceContext, httpApi: apigwv2.HttpApi) {
  const fnId = `Api${constructIdOf(noRouteFunction.handler)}`;
  const fn = createHandlerFunction(ctx.scope, fnId, {
    handler: noRouteFunction.handler,
    environment: { ...ctx.common },
    memorySize: noRouteFunction.memoryMiB,
    timeout: Duration.seconds(noRouteFunction.timeoutSeconds),
    logRetention: ctx.logRetention,
    tracing: ctx.tracing,
  });
  new apigwv2.HttpRoute(httpApi, 'DefaultRoute', {
    httpApi,
    routeKey: apigwv2.HttpRouteKey.DEFAULT,
    integration: new HttpLambdaIntegration(`${fnId}Integration`, fn, {
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
    }),
  });
  return fn;
}

/** The HTTP API: one Lambda per handler file of lib/config.ts's route table, all with one role. */
export function createApi(ctx: ServiceContext, props: ApiProps) {
  const { scope, data } = ctx;
  // One role for all API functions: they are one surface with one set of needs, and a copy of the same
  // policy per function would only hide a difference if one crept in.
  const apiRole = new iam.Role(scope, 'ApiFunctionRole', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
  });
  acknowledgeBasicExecutionRole(apiRole);
  data.grantTable(apiRole, tableActions.api);
  data.grantObjects(
    apiRole,
    ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
    apiObjectAccess,
  );
  data.grantBucketKey(apiRole);
  props.jobs.grantStartExecution(apiRole);
  props.jobs.grantExecution(apiRole, 'states:StopExecution');
  props.archives.grantStartExecution(apiRole);
  props.archives.grantExecution(apiRole, 'states:DescribeExecution');
  const masterKeyEnvironment = (props.masterKey ?? MasterKey.none()).bind(apiRole);

  const httpApi = new apigwv2.HttpApi(scope, 'HttpApi', {
    apiName: props.apiName,
    description: 'Photo Processing Jobs API',
    corsPreflight: {
      allowOrigins: ['*'],
      allowMethods: [apigwv2.CorsHttpMethod.ANY],
      allowHeaders: ['authorization', 'content-type', 'idempotency-key', 'x-api-key'],
      exposeHeaders: [...EXPOSED_RESPONSE_HEADERS],
      maxAge: Duration.hours(1),
    },
  });
  const throttle = props.throttle ?? defaultApiThrottle;
  const accessLogs = createLogGroup(scope, 'ApiAccessLogs', ctx.logRetention);
  const stage = httpApi.defaultStage!.node.defaultChild as apigwv2.CfnStage;
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

  const functions = new Map<string, lambda.IFunction>();
  const integrations = new Map<string, HttpLambdaIntegration>();
  const environment = {
    ...ctx.common,
    TABLE_NAME: data.table.tableName,
    BUCKET_NAME: data.bucket.bucketName,
    STATE_MACHINE_ARN: props.jobs.stateMachineArn,
    ARCHIVE_STATE_MACHINE_ARN: props.archives.stateMachineArn,
    ...masterKeyEnvironment,
  };
  for (const route of [...routes, ...pageRoutes]) {
    let integration = integrations.get(route.handler);
    if (!integration) {
      const fnId = `Api${constructIdOf(route.handler)}`;
      const fn = createHandlerFunction(scope, fnId, {
        handler: route.handler,
        environment,
        memorySize: apiFunction.memoryMiB,
        timeout: Duration.seconds(apiFunction.timeoutSeconds),
        role: apiRole,
        logRetention: ctx.logRetention,
        tracing: ctx.tracing,
      });
      functions.set(route.handler, fn);
      integration = new HttpLambdaIntegration(`${fnId}Integration`, fn, {
        payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
      });
      integrations.set(route.handler, integration);
    }
    const methods = methodsOf(route).map((method) => apigwv2.HttpMethod[method as apigwv2.HttpMethod]);
    httpApi.addRoutes({ path: route.path, methods, integration });
  }
  addNoRoute(ctx, httpApi);
  acknowledge(httpApi, {
    'AwsSolutions-APIG4':
      'The functions authenticate every request themselves (API key, master key or guest session, spec 5); ' +
      'result links and the OpenAPI document are public by design.',
  });
  return { httpApi, functions };
}
