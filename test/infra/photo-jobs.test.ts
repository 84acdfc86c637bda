import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_KEY_RATE } from '../../layers/core/limits/rate.ts';
import { telemetry } from '../../layers/core/telemetry-names.ts';
import { createApp } from '../../lib/app.ts';
import {
  handlerMetadataKey,
  inference,
  noRouteFunction,
  sweeper,
  table as tableConfig,
  workflowHandlers,
} from '../../lib/config.ts';
import { defaultApiThrottle, MasterKey, PhotoJobs, type PhotoJobsProps } from '../../lib/index.ts';
import { type Resource, resourcesOfType } from './templates.ts';

const scratch = mkdtempSync(join(tmpdir(), 'photo-jobs-construct-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Json = { Resources: Record<string, Resource> };

/** A stack of its own holding only `PhotoJobs`, as a deployer's app would. */
function jobsStack(props: PhotoJobsProps = {}, extra?: (stack: Stack) => PhotoJobsProps) {
  const app = createApp({ bundle: false, validate: false });
  const stack = new Stack(app, 'Host');
  const jobs = new PhotoJobs(stack, 'Jobs', { ...props, ...extra?.(stack) });
  const template = Template.fromStack(stack);
  return { stack, jobs, template, json: template.toJSON() as Json };
}

interface Violation {
  ruleName: string;
  violatingConstructs?: { constructPath: string }[];
}

/** Synthesize with both cdk-nag packs; their findings, or none. */
function nagFindings(build: (stack: Stack) => void): Violation[] {
  const outdir = mkdtempSync(join(scratch, 'nag-'));
  const app = createApp({ bundle: false, validate: false, outdir });
  build(new Stack(app, 'Host'));
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  try {
    app.synth();
  } catch {
    // A violation stops the synth; the report says which.
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations?: Violation[] }[];
  };
  return report.pluginReports.flatMap((plugin) => plugin.violations ?? []);
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const functionsOf = (json: Json) => resourcesOfType(json, 'AWS::Lambda::Function');
const roleIdOf = (fn: Resource) => (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
const functionFor = (json: Json, handler: string) => {
  const found = functionsOf(json).filter(([, fn]) => fn.Metadata?.[handlerMetadataKey] === handler);
  expect(found, handler).toHaveLength(1);
  return found[0]![1];
};
/** Every Allow statement attached to a role. */
const statementsOfRole = (json: Json, roleId: string | undefined) =>
  resourcesOfType(json, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap(
      ([, policy]) =>
        (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
    );
const actionsOf = (statements: Record<string, unknown>[]) =>
  [...new Set(statements.flatMap((s) => list(s.Action) as string[]))].sort();
/** The object key patterns a statement names, e.g. `sources/*`, from `<bucket arn>/sources/*`. */
const objectPatterns = (statements: Record<string, unknown>[], action: string) =>
  statements
    .filter((s) => list(s.Action).includes(action))
    .flatMap((s) => list(s.Resource))
    .map((resource) => {
      const parts = (resource as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      return String(parts.at(-1)).replace(/^\//, '');
    })
    .sort();

describe('PhotoJobs with defaults', () => {
  it('synthesizes with the AwsSolutions and Serverless packs of cdk-nag and no unacknowledged finding', () => {
    expect(nagFindings((stack) => new PhotoJobs(stack, 'Jobs', {}))).toEqual([]);
  });

  it('is checked by both packs: a bucket of the host stack without access logs is reported', () => {
    const findings = nagFindings((stack) => {
      new PhotoJobs(stack, 'Jobs', {});
      new s3.Bucket(stack, 'Unrelated', { enforceSSL: true });
    });
    expect(findings.map((f) => f.ruleName)).toEqual(['AwsSolutions-S1']);
    expect(findings[0]?.violatingConstructs?.map((c) => c.constructPath)).toEqual([
      'Host/Unrelated/Resource',
    ]);
  });

  const { jobs, json, template } = jobsStack();

  it('creates its table, bucket and event bus, and exposes them with the API URL and the state machine', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.resourceCountIs('AWS::Events::EventBus', 1);
    expect(Stack.of(jobs).resolve(jobs.apiUrl)).toEqual({
      'Fn::GetAtt': [expect.any(String), 'ApiEndpoint'],
    });
    for (const part of [jobs.table, jobs.bucket, jobs.stateMachine, jobs.eventBus, jobs.inferenceFunction])
      expect(part).toBeDefined();
    expect(resourcesOfType(json, 'AWS::DynamoDB::Table')[0]?.[1].DeletionPolicy).toBe('Retain');
  });

  it('throttles the API stage far above one key’s own limit (a flood of 20 times it fits), and logs its requests', () => {
    // The stage limit is shared by every client: one key flooding must leave room for everyone else.
    expect(defaultApiThrottle.rate).toBeGreaterThan(20 * DEFAULT_KEY_RATE.perSecond);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: {
        ThrottlingRateLimit: defaultApiThrottle.rate,
        ThrottlingBurstLimit: defaultApiThrottle.burst,
      },
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] },
        Format: Match.anyValue(),
      },
    });
  });

  describe('least privilege', () => {
    const allStatements = resourcesOfType(json, 'AWS::IAM::Policy').flatMap(
      ([, policy]) =>
        (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
    );

    it('no policy allows dynamodb:Scan, dynamodb:*, s3:* or *', () => {
      const actions = actionsOf(allStatements);
      for (const forbidden of ['dynamodb:Scan', 'dynamodb:*', 's3:*', '*'])
        expect(actions).not.toContain(forbidden);
      expect(
        actions.filter((a) => a.startsWith('dynamodb:') || a.startsWith('s3:')).some((a) => a.includes('*')),
      ).toBe(false);
    });

    it('the inference function has no DynamoDB action, reads only the photo prefixes and results, writes results', () => {
      const fn = functionFor(json, inference.handler);
      const statements = statementsOfRole(json, roleIdOf(fn));
      expect(actionsOf(statements).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
      expect(actionsOf(statements).filter((a) => !a.startsWith('xray:'))).toEqual([
        's3:GetObject',
        's3:ListBucket',
        's3:PutObject',
      ]);
      expect(objectPatterns(statements, 's3:GetObject')).toEqual(
        [
          'assets/*',
          'batches/*/items/*',
          'cache/*',
          'keys/*/background.*',
          'results/*',
          'sources/*',
          'uploads/*',
        ].sort(),
      );
      expect(objectPatterns(statements, 's3:PutObject')).toEqual(['cache/*', 'results/*']);
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables)).not.toContain('TABLE_NAME');
    });

    const taskNeeds: Array<[string, string, string[]]> = [
      ['prepare', workflowHandlers.prepareJob, []],
      ['settle', workflowHandlers.settleJob, ['states:StartExecution']],
      ['deliver', workflowHandlers.deliverWebhook, ['events:PutEvents']],
      [
        'archive',
        workflowHandlers.batchArchive,
        [
          'dynamodb:BatchWriteItem',
          's3:AbortMultipartUpload',
          's3:GetObject',
          's3:ListBucket',
          's3:PutObject',
          'states:StartExecution',
        ],
      ],
      ['sweeper', sweeper.handler, ['states:DescribeExecution', 'states:StartExecution']],
    ];
    it.each(taskNeeds)(
      'the %s task reaches the table and only what its task needs besides',
      (_, handler, extra) => {
        const fn = functionFor(json, handler);
        const actions = actionsOf(statementsOfRole(json, roleIdOf(fn))).filter((a) => !a.startsWith('xray:'));
        expect(actions).toEqual(
          [
            'dynamodb:ConditionCheckItem',
            'dynamodb:GetItem',
            'dynamodb:PutItem',
            'dynamodb:Query',
            'dynamodb:UpdateItem',
            ...extra,
          ].sort(),
        );
      },
    );

    it('only the sweeper reads the index of unfinished work, and only by Query', () => {
      const readers = functionsOf(json).flatMap(([, fn]) =>
        statementsOfRole(json, roleIdOf(fn))
          .filter((statement) =>
            JSON.stringify(statement.Resource).includes(`/index/${tableConfig.active.name}`),
          )
          .map((statement) => [String(fn.Metadata?.[handlerMetadataKey]), statement.Action]),
      );
      expect(readers).toEqual([[sweeper.handler, 'dynamodb:Query']]);
    });

    it('the archive task reads uploads, batches and results, and writes only under batches/', () => {
      const statements = statementsOfRole(json, roleIdOf(functionFor(json, workflowHandlers.batchArchive)));
      expect(objectPatterns(statements, 's3:GetObject')).toEqual(['batches/*', 'results/*', 'uploads/*']);
      expect(objectPatterns(statements, 's3:PutObject')).toEqual(['batches/*']);
    });

    // Existence checks list the key (layers/aws/s3-objects.ts): each role reading objects may list the
    // bucket, and only under the prefixes it reads.
    const readers: Array<[string, string]> = [
      ['inference', inference.handler],
      ['archive', workflowHandlers.batchArchive],
      ['API', 'functions/api/create-job/handler.ts'],
    ];
    it.each(readers)('the %s role may list the bucket exactly under the prefixes it reads', (_, handler) => {
      const statements = statementsOfRole(json, roleIdOf(functionFor(json, handler)));
      const listing = statements.filter((s) => list(s.Action).includes('s3:ListBucket'));
      expect(listing.length).toBeGreaterThan(0);
      for (const statement of listing) {
        expect(list(statement.Action)).toEqual(['s3:ListBucket']);
        expect(statement.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^JobsData/), 'Arn'] });
      }
      const prefixes = listing
        .flatMap((s) =>
          list((s.Condition as { StringLike: Record<string, unknown> }).StringLike['s3:prefix']),
        )
        .sort();
      expect(prefixes).toEqual(objectPatterns(statements, 's3:GetObject'));
    });

    it('no role may list the bucket without a prefix condition', () => {
      for (const statement of allStatements.filter((s) => list(s.Action).includes('s3:ListBucket')))
        expect(statement.Condition).toEqual({ StringLike: { 's3:prefix': expect.any(Array) } });
    });

    it('the API functions share one role that may delete objects and records but never scan', () => {
      const apiFunctions = functionsOf(json).filter(
        ([, fn]) =>
          String(fn.Metadata?.[handlerMetadataKey]).startsWith('functions/api/') &&
          fn.Metadata?.[handlerMetadataKey] !== noRouteFunction.handler,
      );
      const roles = new Set(apiFunctions.map(([, fn]) => roleIdOf(fn)));
      expect(roles.size).toBe(1);
      const actions = actionsOf(statementsOfRole(json, [...roles][0]));
      expect(actions).toEqual(
        expect.arrayContaining(['dynamodb:DeleteItem', 's3:DeleteObject', 'states:StartExecution']),
      );
      expect(actions).not.toContain('dynamodb:Scan');
    });
  });
});

describe('PhotoJobs observability', () => {
  const { json } = jobsStack();

  const machinesOf = (template: Json) =>
    resourcesOfType(template, 'AWS::StepFunctions::StateMachine').map(([, machine]) => machine);

  const sampled = jobsStack({ tracing: 'sampled' }).json;
  /** The actions of every policy in the template, the state machines' roles included. */
  const allActions = (template: Json) =>
    actionsOf(
      resourcesOfType(template, 'AWS::IAM::Policy').flatMap(
        ([, policy]) =>
          (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      ),
    );
  const traceSwitchOf = (fn: Resource) =>
    (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_TRACE_ENABLED;

  it('records no X-Ray trace by default, and traces every function and state machine when sampled', () => {
    for (const [id, fn] of functionsOf(json)) expect(fn.Properties.TracingConfig, id).toBeUndefined();
    for (const machine of machinesOf(json)) expect(machine.Properties.TracingConfiguration).toBeUndefined();
    for (const [id, fn] of functionsOf(sampled))
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
    expect(machinesOf(sampled).length).toBeGreaterThan(0);
    for (const machine of machinesOf(sampled))
      expect(machine.Properties.TracingConfiguration).toEqual({ Enabled: true });
  });

  it('grants no role an X-Ray action by default, and grants writing traces when sampled', () => {
    expect(allActions(json).filter((action) => action.startsWith('xray:'))).toEqual([]);
    expect(allActions(sampled)).toEqual(
      expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
    );
  });

  it('tells every function’s code whether to load the tracer, as its TracingConfig says', () => {
    for (const [id, fn] of functionsOf(json)) expect(traceSwitchOf(fn), id).toBe('false');
    for (const [id, fn] of functionsOf(sampled)) expect(traceSwitchOf(fn), id).toBe('true');
  });

  it('synthesizes with tracing sampled and no unacknowledged finding of cdk-nag', () => {
    expect(nagFindings((stack) => new PhotoJobs(stack, 'Jobs', { tracing: 'sampled' }))).toEqual([]);
  });

  it('names the Powertools service, metrics namespace and log level on every function', () => {
    const all = functionsOf(json);
    expect(all.length).toBeGreaterThan(20);
    for (const [id, fn] of all) {
      expect(
        (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
        id,
      ).toMatchObject({
        POWERTOOLS_SERVICE_NAME: telemetry.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: telemetry.metricsNamespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
    }
  });

  it('never turns Powertools’ development mode on, nor metrics off, in AWS', () => {
    const variables = JSON.stringify(functionsOf(json).map(([, fn]) => fn.Properties.Environment));
    for (const name of ['POWERTOOLS_DEV', 'POWERTOOLS_METRICS_DISABLED'])
      expect(variables).not.toContain(name);
  });
});

describe('PhotoJobs over an existing table and bucket', () => {
  const { json, template } = jobsStack({}, (stack) => ({
    existingTable: dynamodb.Table.fromTableName(stack, 'Table', 'their-table'),
    existingBucket: s3.Bucket.fromBucketName(stack, 'Bucket', 'their-bucket'),
    existingEventBus: events.EventBus.fromEventBusName(stack, 'Bus', 'their-bus'),
    apiThrottle: { rate: 50, burst: 100 },
  }));

  it('creates no table, bucket or event bus again, and points the functions at the given ones', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.resourceCountIs('AWS::Events::EventBus', 0);
    const deliver = functionFor(json, workflowHandlers.deliverWebhook);
    expect(deliver.Properties.Environment).toEqual({
      Variables: expect.objectContaining({ TABLE_NAME: 'their-table', EVENT_BUS_NAME: 'their-bus' }),
    });
    expect(JSON.stringify(statementsOfRole(json, roleIdOf(functionFor(json, inference.handler))))).toContain(
      ':s3:::their-bucket/results/*',
    );
  });

  it('applies throttling 50/100 to the API stage', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
  });
});

describe('PhotoJobs props', () => {
  it('removalPolicy DESTROY deletes the table and empties the bucket with the stack', () => {
    const { json } = jobsStack({ removalPolicy: RemovalPolicy.DESTROY });
    expect(resourcesOfType(json, 'AWS::DynamoDB::Table')[0]?.[1].DeletionPolicy).toBe('Delete');
    expect(resourcesOfType(json, 'AWS::S3::Bucket')[0]?.[1].DeletionPolicy).toBe('Delete');
  });

  it('a master key in Secrets Manager is readable by the API role only, named in the API environment', () => {
    const { json, stack } = jobsStack({}, (stack) => ({
      masterKey: MasterKey.fromSecret(new secretsmanager.Secret(stack, 'MasterKey')),
    }));
    const [[secretId] = []] = resourcesOfType(json, 'AWS::SecretsManager::Secret');
    const readers = resourcesOfType(json, 'AWS::IAM::Policy').filter(([, policy]) =>
      JSON.stringify(policy.Properties.PolicyDocument).includes('secretsmanager:GetSecretValue'),
    );
    expect(readers).toHaveLength(1);
    const api = functionFor(json, 'functions/api/get-job/handler.ts');
    expect(readers[0]?.[1].Properties.Roles).toEqual([{ Ref: roleIdOf(api) }]);
    expect((api.Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      MASTER_KEY_SECRET_ARN: { Ref: secretId },
    });
    expect(stack).toBeDefined();
  });

  it('a master key in SSM is named by its parameter', () => {
    const { json } = jobsStack({}, (stack) => ({
      masterKey: MasterKey.fromSsmParameter(
        ssm.StringParameter.fromSecureStringParameterAttributes(stack, 'Key', {
          parameterName: '/pj/master',
        }),
      ),
    }));
    const api = functionFor(json, 'functions/api/get-job/handler.ts');
    expect((api.Properties.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      MASTER_KEY_PARAMETER_NAME: '/pj/master',
    });
    expect(JSON.stringify(statementsOfRole(json, roleIdOf(api)))).toContain('ssm:GetParameter');
  });

  it('sizes the inference function, keeps logs as long as asked and follows the webhook schedule given', () => {
    const { json } = jobsStack({
      inference: { memorySize: 4096, architecture: lambda.Architecture.X86_64, reservedConcurrency: 5 },
      logRetention: logs.RetentionDays.ONE_WEEK,
      webhookRetrySchedule: {
        interval: Duration.seconds(10),
        backoffRate: 2,
        maxAttempts: 3,
        maxDelay: Duration.minutes(5),
      },
    });
    expect(functionFor(json, inference.handler).Properties).toMatchObject({
      MemorySize: 4096,
      Architectures: ['x86_64'],
      ReservedConcurrentExecutions: 5,
    });
    // An account whose concurrency quota is too small to reserve any (a new one has 10) deploys with none.
    const unreserved = jobsStack({ inference: { reservedConcurrency: null } }).json;
    expect(
      functionFor(unreserved, inference.handler).Properties.ReservedConcurrentExecutions,
    ).toBeUndefined();
    for (const [, group] of resourcesOfType(json, 'AWS::Logs::LogGroup'))
      expect(group.Properties.RetentionInDays).toBe(7);
    const definitions = JSON.stringify(
      resourcesOfType(json, 'AWS::StepFunctions::StateMachine').map(([, m]) => m.Properties.DefinitionString),
    );
    // The run makes the first attempt; the follow-up waits the first bound, then retries from the second.
    expect(definitions).toContain('\\"Type\\":\\"Wait\\",\\"Seconds\\":10,');
    expect(definitions).toContain(
      '\\"ErrorEquals\\":[\\"WebhookDeliveryError\\"],\\"IntervalSeconds\\":20,\\"MaxAttempts\\":2,\\"BackoffRate\\":2,\\"MaxDelaySeconds\\":300',
    );
  });
});

describe('PhotoJobs monitoring', () => {
  const alarmed = jobsStack({}, (stack) => ({ alarmTopic: new sns.Topic(stack, 'Alarms') }));
  const alarms = resourcesOfType(alarmed.json, 'AWS::CloudWatch::Alarm');

  it('alarms on failed executions, stuck work, API 5xx rate, throttles, inference errors and p95, webhooks given up', () => {
    const described = alarms.map(([, a]) => String(a.Properties.AlarmDescription)).join('\n');
    for (const subject of [
      /job execution failed/,
      /archive/,
      /stuck/,
      /5xx/,
      /throttled/,
      /inference function failed/,
      /p95/,
      /webhook receiver/,
    ])
      expect(described).toMatch(subject);
  });

  it('sends every alarm to the alarm topic, and shows them on a dashboard', () => {
    const [[topicId] = []] = resourcesOfType(alarmed.json, 'AWS::SNS::Topic');
    for (const [id, a] of alarms) expect(a.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
    alarmed.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it('graphs what the functions publish: jobs by operation and code, inference p95, webhook attempts', () => {
    const [[, dashboard] = []] = resourcesOfType(alarmed.json, 'AWS::CloudWatch::Dashboard');
    const parts = (dashboard!.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const body = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'token')).join('')) as {
      widgets: { properties: { metrics?: unknown[][] } }[];
    };
    const expressions = body.widgets
      .flatMap((widget) => widget.properties.metrics ?? [])
      .flat()
      .flatMap((entry) => (entry as { expression?: string }).expression ?? []);
    const namespace = telemetry.metricsNamespace;
    const { jobsCreated, jobsSucceeded, jobsFailed, inferenceDuration, webhookAttempts } = telemetry.metrics;
    expect(expressions).toEqual(
      expect.arrayContaining([
        `SEARCH('{${namespace},operation,service} MetricName="${jobsCreated}"', 'Sum', 300)`,
        `SEARCH('{${namespace},operation,service} MetricName="${jobsSucceeded}"', 'Sum', 300)`,
        `SEARCH('{${namespace},code,operation,service} MetricName="${jobsFailed}"', 'Sum', 300)`,
        `SEARCH('{${namespace},operation,service} MetricName="${inferenceDuration}"', 'p95', 300)`,
        `SEARCH('{${namespace},outcome,service} MetricName="${webhookAttempts}"', 'Sum', 300)`,
      ]),
    );
  });

  it('without a topic still creates the alarms, with no action', () => {
    const { json } = jobsStack();
    const quiet = resourcesOfType(json, 'AWS::CloudWatch::Alarm');
    expect(quiet).toHaveLength(alarms.length);
    for (const [, a] of quiet) expect(a.Properties.AlarmActions).toBeUndefined();
  });
});
