import { describe, expect, it } from 'vitest';
import { functionEnvironment } from '../../../local/function-environment.ts';
import { intrinsicResolver, type LocalNames } from '../../../local/iam.ts';
import { readTopology } from '../../../local/template.ts';

const data = {
  Resources: { DataTable: { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [] } } },
  Outputs: { Table: { Value: { Ref: 'DataTable' }, Export: { Name: 'Data:Table' } } },
};
const lambda = (variables: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::Function',
  Metadata: { 'photo-jobs:handler': 'functions/x/handler.ts' },
  Properties: { Timeout: 29, Environment: { Variables: variables } },
});
const service = {
  Parameters: { MasterKeySha256: { Type: 'String', Default: '' } },
  Resources: {
    Jobs: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: { StateMachineName: 'jobs', DefinitionString: '{"StartAt":"A","States":{}}' },
    },
    Api: lambda({
      POWERTOOLS_LOG_LEVEL: 'INFO',
      TABLE_NAME: { 'Fn::ImportValue': 'Data:Table' },
      STATE_MACHINE_ARN: { Ref: 'Jobs' },
      MASTER_KEY_SHA256: { Ref: 'MasterKeySha256' },
    }),
    NoRoute: lambda({ POWERTOOLS_LOG_LEVEL: 'INFO' }),
  },
};
const names: LocalNames = {
  table: () => 'photo-jobs-local',
  bucket: () => 'photo-jobs-local',
  eventBus: () => 'photo-jobs-local',
  stateMachine: (id, resource) => resource.Properties?.StateMachineName ?? id,
};
const topology = readTopology([data, service], () => 'photo-jobs-local');
const { resolve } = intrinsicResolver([data, service], names, { MasterKeySha256: 'ab'.repeat(32) });
// The stack process's environment: the operator's settings, the stand-ins, and whatever else the shell has.
const host = {
  PATH: '/usr/bin',
  TABLE_NAME: 'photo-jobs-local',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:4000',
  MAX_JOBS_IN_FLIGHT: '5',
  SOME_SECRET: 'not for functions',
};

describe('a local function’s environment', () => {
  it('has its template entry’s variables, resolved to the local resources and the deploy parameters', () => {
    const environment = functionEnvironment(topology.functions.get('Api')!, resolve, host);
    expect(environment).toMatchObject({
      POWERTOOLS_LOG_LEVEL: 'INFO',
      TABLE_NAME: 'photo-jobs-local',
      STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:jobs',
      MASTER_KEY_SHA256: 'ab'.repeat(32),
      AWS_REGION: 'us-east-1',
      AWS_LAMBDA_FUNCTION_NAME: 'Api',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:4000',
      MAX_JOBS_IN_FLIGHT: '5',
      PATH: '/usr/bin',
    });
    expect(environment).not.toHaveProperty('SOME_SECRET');
  });

  it('has nothing its template entry does not name: no table for a function given none', () => {
    const environment = functionEnvironment(topology.functions.get('NoRoute')!, resolve, host, {
      GUEST_TRIAL_CREDITS: '50',
    });
    expect(environment).not.toHaveProperty('TABLE_NAME');
    expect(environment).not.toHaveProperty('STATE_MACHINE_ARN');
    expect(environment).not.toHaveProperty('MASTER_KEY_SHA256');
    expect(environment).toMatchObject({ GUEST_TRIAL_CREDITS: '50', MAX_JOBS_IN_FLIGHT: '5' });
  });

  it('reads each function’s timeout and variables, and each route’s integration timeout, from the template', () => {
    const withTimeout = readTopology(
      [
        {
          Resources: {
            Fn: lambda({ A: 'b' }),
            Integration: {
              Type: 'AWS::ApiGatewayV2::Integration',
              Properties: { IntegrationUri: { 'Fn::GetAtt': ['Fn', 'Arn'] }, TimeoutInMillis: 12_000 },
            },
            Route: {
              Type: 'AWS::ApiGatewayV2::Route',
              Properties: {
                RouteKey: '$default',
                Target: { 'Fn::Join': ['', ['integrations/', { Ref: 'Integration' }]] },
              },
            },
          },
        },
      ],
      (id) => id,
    );
    expect(withTimeout.functions.get('Fn')).toMatchObject({ timeoutSeconds: 29, environment: { A: 'b' } });
    expect(withTimeout.routes).toEqual([{ routeKey: '$default', functionId: 'Fn', timeoutMs: 12_000 }]);
  });
});
