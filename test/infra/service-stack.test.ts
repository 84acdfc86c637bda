import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  handlerMetadataKey,
  inference,
  noRouteFunction,
  pageRoutes,
  repoRoot,
  routes,
  sweeper,
  workflowHandlers,
} from '../../lib/config.ts';
import { type Resource, resourcesOfType, synthesize } from './templates.ts';

const { serviceJson } = await synthesize();

const exists = (handler: string) => existsSync(join(repoRoot, handler));
const functions = resourcesOfType(serviceJson, 'AWS::Lambda::Function');
const handlerOf = (resource: Resource) => resource.Metadata?.[handlerMetadataKey];
const functionIdOf = (handler: string) =>
  functions.filter(([, fn]) => handlerOf(fn) === handler).map(([logicalId]) => logicalId);
/** The endpoints' functions; the `$default` route's has a role and settings of its own. */
const isApiFunction = (resource: Resource) =>
  String(handlerOf(resource)).startsWith('functions/api/') && handlerOf(resource) !== noRouteFunction.handler;
const apiRoleIds = new Set(
  functions
    .filter(([, fn]) => isApiFunction(fn))
    .map(([, fn]) => (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]),
);

/** A route's Target is `integrations/${Ref}`; the Ref names the integration resource. */
const integrationIdOf = (target: unknown): string => {
  const [, parts] = (target as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const ref = parts.find(
    (part): part is { Ref: string } => typeof part === 'object' && part !== null && 'Ref' in part,
  );
  return ref?.Ref ?? '';
};

describe('route table', () => {
  it('has no method and path twice', () => {
    const keys = [...routes, ...pageRoutes].map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each([
    'functions/api/create-job/handler.ts',
    'functions/api/get-job/handler.ts',
    'functions/api/get-result/handler.ts',
  ])('has its core handler %s on disk', (handler) => {
    expect(exists(handler)).toBe(true);
  });
});

describe('HTTP API', () => {
  const templateRoutes = resourcesOfType(serviceJson, 'AWS::ApiGatewayV2::Route');
  const integrations = Object.fromEntries(resourcesOfType(serviceJson, 'AWS::ApiGatewayV2::Integration'));
  // The API and the pages (console, reference) it serves on the same origin.
  const present = [...routes, ...pageRoutes].filter((route) => exists(route.handler));

  it.each(present.map((route) => [`${route.method} ${route.path}`, route.handler]))(
    'routes %s to exactly one integration of %s (payload 2.0)',
    (routeKey, handler) => {
      const matching = templateRoutes.filter(([, route]) => route.Properties.RouteKey === routeKey);
      expect(matching).toHaveLength(1);
      const target = integrationIdOf(matching[0]?.[1].Properties.Target);
      const integration = integrations[target];
      expect(integration?.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
      });
      const uri = integration?.Properties.IntegrationUri as { 'Fn::GetAtt': string[] } | undefined;
      const functionId = uri?.['Fn::GetAtt'][0];
      expect(functionIdOf(handler)).toEqual([functionId]);
    },
  );

  it('lets a browser on another origin read Retry-After and Location (CORS expose headers)', () => {
    const apis = resourcesOfType(serviceJson, 'AWS::ApiGatewayV2::Api');
    expect(apis).toHaveLength(1);
    expect(apis[0]![1].Properties).toMatchObject({
      CorsConfiguration: { ExposeHeaders: ['retry-after', 'location'] },
    });
  });

  it('has a route for every present handler, HEAD beside every GET, $default, and nothing else', () => {
    const gets = present.filter((route) => route.method === 'GET');
    expect(templateRoutes).toHaveLength(present.length + gets.length + 1);
    const targetOf = (routeKey: string) =>
      templateRoutes.find(([, route]) => route.Properties.RouteKey === routeKey)?.[1].Properties.Target;
    for (const route of gets) {
      expect(targetOf(`HEAD ${route.path}`), route.path).toEqual(targetOf(`GET ${route.path}`));
    }
  });

  it('sends every request no route takes ($default) to a function of its own that answers 404 and 405', () => {
    const defaults = templateRoutes.filter(([, route]) => route.Properties.RouteKey === '$default');
    expect(defaults).toHaveLength(1);
    const integration = integrations[integrationIdOf(defaults[0]![1].Properties.Target)];
    expect(integration?.Properties).toMatchObject({
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
    });
    const uri = integration!.Properties.IntegrationUri as { 'Fn::GetAtt': string[] };
    const functionId = uri['Fn::GetAtt'][0];
    expect(functionIdOf(noRouteFunction.handler)).toEqual([functionId]);
    const fn = serviceJson.Resources[functionId ?? '']!;
    expect(fn.Properties).toMatchObject({
      MemorySize: noRouteFunction.memoryMiB,
      Timeout: noRouteFunction.timeoutSeconds,
    });
    // Nothing to find and nothing to call: no table, bucket, workflow or master key.
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(variables).sort()).toEqual(
      [
        'POWERTOOLS_LOG_LEVEL',
        'POWERTOOLS_METRICS_NAMESPACE',
        'POWERTOOLS_SERVICE_NAME',
        'POWERTOOLS_TRACE_ENABLED',
      ].sort(),
    );
  });

  it('creates one function per distinct API handler file', () => {
    const handlers = new Set(present.map((route) => route.handler));
    const apiFunctions = functions.filter(([, fn]) => isApiFunction(fn));
    expect(apiFunctions.map(([, fn]) => handlerOf(fn)).sort()).toEqual([...handlers].sort());
  });
});

describe('functions', () => {
  it('all name their entry file in metadata', () => {
    for (const [logicalId, fn] of functions) {
      expect(handlerOf(fn), logicalId).toMatch(/^functions\/.+\/handler\.ts$/);
    }
    for (const handler of [...Object.values(workflowHandlers), inference.handler]) {
      expect(functionIdOf(handler), handler).toHaveLength(1);
    }
  });

  it('run zip code on Node 22 and arm64', () => {
    const zipFunctions = functions.filter(([, fn]) => fn.Properties.PackageType !== 'Image');
    expect(zipFunctions.length).toBeGreaterThanOrEqual(2);
    for (const [logicalId, fn] of zipFunctions) {
      expect(fn.Properties, logicalId).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    }
  });

  it('give API functions 512 MB and 29 s and the shared environment', () => {
    for (const [logicalId, fn] of functions.filter(([, f]) => isApiFunction(f))) {
      expect(fn.Properties, logicalId).toMatchObject({ MemorySize: 512, Timeout: 29 });
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables).sort()).toEqual(
        [
          'ARCHIVE_STATE_MACHINE_ARN',
          'BUCKET_NAME',
          'MASTER_KEY_SHA256',
          'POWERTOOLS_LOG_LEVEL',
          'POWERTOOLS_METRICS_NAMESPACE',
          'POWERTOOLS_SERVICE_NAME',
          'POWERTOOLS_TRACE_ENABLED',
          'STATE_MACHINE_ARN',
          'TABLE_NAME',
        ].sort(),
      );
      // Source maps only when the deployer asks (PhotoJobsProps.sourceMaps): reading them costs every cold start.
      expect(variables.NODE_OPTIONS).toBeUndefined();
    }
  });

  it('run inference from a container image with room for the models', () => {
    const [id] = functionIdOf(inference.handler);
    const fn = serviceJson.Resources[id ?? ''];
    expect(fn?.Properties).toMatchObject({
      PackageType: 'Image',
      Architectures: ['arm64'],
      MemorySize: 2560,
      Timeout: 120,
      EphemeralStorage: { Size: 2048 },
      Environment: { Variables: { MODELS_DIR: '/opt/models', MALLOC_ARENA_MAX: '2' } },
      // A burst of jobs must not take the instances the API needs: concurrency is one pool per account.
      ReservedConcurrentExecutions: 20,
    });
    // The API's functions share the rest of the pool.
    for (const [, fn] of functions.filter(([, fn]) => isApiFunction(fn)))
      expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });
});

describe('IAM of the functions', () => {
  const lambdaRoleIds = new Set(
    functions.map(([, fn]) => (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]),
  );
  const statementsOf = (roleIds: Set<string | undefined>) =>
    resourcesOfType(serviceJson, 'AWS::IAM::Policy')
      .filter(([, policy]) =>
        (policy.Properties.Roles as { Ref: string }[]).some((role) => roleIds.has(role.Ref)),
      )
      .flatMap(
        ([, policy]) =>
          (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      );
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
  const wildcardMatches = (pattern: string, action: string) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);

  it('shares one role between all API functions', () => {
    expect(apiRoleIds.size).toBe(1);
  });

  it('gives the $default route’s function a role of its own that may only write logs (and traces, where on)', () => {
    const [functionId] = functionIdOf(noRouteFunction.handler);
    const roleId = (serviceJson.Resources[functionId ?? '']!.Properties.Role as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    expect(apiRoleIds.has(roleId)).toBe(false);
    const role = serviceJson.Resources[roleId ?? '']!;
    expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(
      'service-role/AWSLambdaBasicExecutionRole',
    );
    const actions = statementsOf(new Set([roleId])).flatMap((statement) => list(statement.Action));
    expect(
      actions.every((action) => String(action).startsWith('xray:')),
      String(actions),
    ).toBe(true);
  });

  it('never allow deleting the bucket or any action on *, and * as a resource only for X-Ray', () => {
    for (const statement of statementsOf(lambdaRoleIds)) {
      for (const action of list(statement.Action) as string[]) {
        expect(wildcardMatches(action, 's3:DeleteBucket'), action).toBe(false);
        expect(action).not.toBe('*');
      }
      // X-Ray has no resource-level permissions: PutTraceSegments is granted on * or not at all.
      if (list(statement.Resource).includes('*'))
        expect(list(statement.Action).every((action) => String(action).startsWith('xray:'))).toBe(true);
    }
  });

  it('scope API data access to the table and the bucket prefixes', () => {
    const statements = statementsOf(apiRoleIds);
    const resourcesFor = (prefix: string) =>
      JSON.stringify(
        statements
          .filter((s) => (list(s.Action) as string[]).some((a) => a.startsWith(prefix)))
          .map((s) => s.Resource),
      );
    expect(resourcesFor('dynamodb:')).toMatch(/ExportsOutputFnGetAttDataTable[0-9A-F]+Arn/);
    expect(resourcesFor('dynamodb:')).toContain('/index/gsi1');
    const s3 = resourcesFor('s3:');
    expect(s3).toMatch(/ExportsOutputFnGetAttDataBucket[0-9A-F]+Arn/);
    for (const prefix of ['/sources/*', '/results/*', '/assets/*', '/batches/*', '/cache/*', '/keys/*'])
      expect(s3).toContain(prefix);
  });

  /** The follow-ups machine: only the job runs start it (lib/constructs/job-workflow.ts). */
  const followUpsId = () =>
    resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine').find(([, machine]) =>
      JSON.stringify(machine.Properties.DefinitionString).includes('{\\"StartAt\\":\\"FollowUp\\"'),
    )![0];
  const startedByFunctions = () =>
    resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine')
      .map(([id]) => id)
      .filter((id) => id !== followUpsId());

  it('start follow-ups from the job runs only', () => {
    const runs = resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine').find(([, machine]) =>
      JSON.stringify(machine.Properties.DefinitionString).includes('{\\"StartAt\\":\\"PrepareJob\\"'),
    )!;
    const roleId = (runs[1].Properties.RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    const starts = statementsOf(new Set([roleId])).filter((s) =>
      list(s.Action).includes('states:StartExecution'),
    );
    expect(starts).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: { Ref: followUpsId() } })]);
  });

  it('let API functions start and stop executions of the job workflow, and start and read the archive workflow’s', () => {
    const statements = statementsOf(apiRoleIds);
    const machines = startedByFunctions();
    const byAction = (action: string) => statements.filter((s) => list(s.Action).includes(action));
    expect(byAction('states:StartExecution')).toEqual(
      machines.map((id) => expect.objectContaining({ Effect: 'Allow', Resource: { Ref: id } })),
    );
    expect(JSON.stringify(byAction('states:StopExecution'))).toContain(':execution:');
    expect(JSON.stringify(byAction('states:DescribeExecution'))).toContain(':execution:');
  });

  it('let the settle function start executions of the job workflow (a batch’s next item), and no other task', () => {
    const roleOf = (handler: string) =>
      new Set(
        functions
          .filter(([, fn]) => handlerOf(fn) === handler)
          .map(([, fn]) => (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]),
      );
    const starts = (handler: string) =>
      statementsOf(roleOf(handler)).filter((s) => list(s.Action).includes('states:StartExecution'));
    const settle = starts(workflowHandlers.settleJob);
    expect(settle).toHaveLength(1);
    expect(JSON.stringify(settle[0]!.Resource)).toMatch(/:stateMachine:.*-jobs/);
    expect(starts(workflowHandlers.prepareJob)).toEqual([]);
    expect(starts(inference.handler)).toEqual([]);
  });

  it('run the sweeper of stuck work every 5 minutes, allowed to start job runs, their follow-ups and archive tasks, and to describe the latter', () => {
    const [sweeperId] = functionIdOf(sweeper.handler);
    expect(sweeperId).toBeDefined();
    const rules = resourcesOfType(serviceJson, 'AWS::Events::Rule').filter(([, rule]) =>
      JSON.stringify(rule.Properties.Targets).includes(sweeperId!),
    );
    expect(rules.map(([, rule]) => rule.Properties.ScheduleExpression)).toEqual(['rate(5 minutes)']);
    const roleId = (serviceJson.Resources[sweeperId!]!.Properties.Role as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    const statements = statementsOf(new Set([roleId]));
    const byAction = (action: string) =>
      JSON.stringify(statements.filter((s) => list(s.Action).includes(action)));
    for (const id of startedByFunctions()) expect(byAction('states:StartExecution')).toContain(id);
    expect(byAction('states:StartExecution')).toContain(followUpsId());
    expect(byAction('states:DescribeExecution')).toContain(':execution:');
  });

  it('deploy only the master key hash, as a hidden parameter that must be a sha256 or empty', () => {
    expect(serviceJson.Parameters?.MasterKeySha256).toMatchObject({
      Type: 'String',
      NoEcho: true,
      Default: '',
      AllowedPattern: '^([0-9a-f]{64})?$',
    });
    const [[, fn] = []] = functions.filter(([, f]) => isApiFunction(f));
    const variables = (fn!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables.MASTER_KEY_SHA256).toEqual({ Ref: 'MasterKeySha256' });
  });
});

describe('job events', () => {
  const buses = resourcesOfType(serviceJson, 'AWS::Events::EventBus');
  const [[busId] = []] = buses;
  const [deliverId] = functionIdOf(workflowHandlers.deliverWebhook);
  const fnOf = (functionId: string | undefined) => serviceJson.Resources[functionId ?? ''] as Resource;
  const roleOf = (functionId: string | undefined) =>
    (fnOf(functionId).Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  const putEventsStatements = resourcesOfType(serviceJson, 'AWS::IAM::Policy').flatMap(([, policy]) =>
    (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement.filter((s) =>
      JSON.stringify(s.Action).includes('events:PutEvents'),
    ).map((statement) => ({ statement, roles: policy.Properties.Roles as { Ref: string }[] })),
  );

  it('go to one event bus of the service', () => {
    expect(buses).toHaveLength(1);
    expect(buses[0]?.[1].Properties.Name).toEqual(expect.stringMatching(/-jobs$/));
  });

  it('are published by the webhook task only, which gets the bus name', () => {
    const variables = (fnOf(deliverId).Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(variables.EVENT_BUS_NAME).toEqual({ Ref: busId });
    expect(putEventsStatements).toHaveLength(1);
    expect(putEventsStatements[0]?.roles).toEqual([{ Ref: roleOf(deliverId) }]);
    expect(putEventsStatements[0]?.statement.Resource).toEqual({ 'Fn::GetAtt': [busId, 'Arn'] });
  });
});

describe('ServiceStack outputs', () => {
  it('give the API URL, the state machine ARN and the event bus', () => {
    expect(Object.keys(serviceJson.Outputs)).toEqual(
      expect.arrayContaining(['ApiUrl', 'StateMachineArn', 'EventBusName']),
    );
  });
});

describe('state machine logs', () => {
  // Outside /aws/vendedlogs/, Step Functions lists each group in the account's one CloudWatch Logs resource
  // policy, which holds 5,120 characters: enough deployments and log delivery fails to set up.
  it('go to groups under /aws/vendedlogs/states/, named apart per stack', () => {
    const groups = new Map(resourcesOfType(serviceJson, 'AWS::Logs::LogGroup'));
    const machines = resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(3);
    const names = machines.map(([, machine]) => {
      const { LoggingConfiguration } = machine.Properties as {
        LoggingConfiguration: {
          Destinations: { CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [string, string] } } }[];
        };
      };
      const [groupId] =
        LoggingConfiguration.Destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'];
      return String(groups.get(groupId)?.Properties.LogGroupName);
    });
    for (const name of names) {
      expect(name).toMatch(/^\/aws\/vendedlogs\/states\/PhotoJobsService-[\w-]+$/);
      expect(name.length).toBeLessThanOrEqual(512);
    }
    // The job runs and their follow-ups share one group: a job's story reads in one place.
    expect(new Set(names).size).toBe(2);
  });
});
