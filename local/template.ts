import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { CfnTemplate } from '../lib/app.ts';
import { stackNames } from '../lib/config.ts';
import type { CorsConfiguration } from './api-gateway.ts';
import type { LifecycleRule } from './s3-lifecycle.ts';
import type { StageThrottle } from './stage-throttle.ts';

/** What the embedded stack needs from the synthesized CloudFormation, so that it follows the CDK app exactly. */
export interface LocalTopology {
  functions: Map<string, LocalFunction>;
  /** `timeoutMs`: the integration's `TimeoutInMillis`, when the template sets one. */
  routes: Array<{ routeKey: string; functionId: string; timeoutMs?: number }>;
  stateMachines: Array<{
    logicalId: string;
    name?: string;
    /** CloudFormation's default when the property is absent: STANDARD. */
    type: 'STANDARD' | 'EXPRESS';
    definition: Record<string, unknown>;
  }>;
  tables: CreateTableCommandInput[];
  /** The HTTP API's CORS configuration; null without one. */
  cors: CorsConfiguration | null;
  /** The stage's default route throttle; null without one. */
  throttle: StageThrottle | null;
  /** The bucket's enabled expiration rules by age (`ExpirationInDays`), from its `LifecycleConfiguration`. */
  lifecycle: LifecycleRule[];
}

export interface LocalFunction {
  logicalId: string;
  /** Repo-relative module path, from the `photo-jobs:handler` metadata. */
  handler: string;
  /** Container-image functions run the models: locally they go to the worker pool. */
  image: boolean;
  timeoutSeconds: number;
  /** `Environment.Variables` as the template has them, intrinsics unresolved (the local stack resolves them). */
  environment: Record<string, unknown>;
  /** Hash of the zip asset (`asset.<hash>/index.mjs` in the cloud assembly) when the synth bundled it. */
  assetHash?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are free-form JSON, checked where read.
type Json = Record<string, any>;
type Resource = { Type: string; Properties?: Json; Metadata?: Record<string, unknown> };
type Template = { Resources?: Record<string, Resource> };

export const localFunctionArn = (logicalId: string): string =>
  `arn:aws:lambda:us-east-1:000000000000:function:${logicalId}`;

/** Resolve the intrinsic functions CDK puts into a state machine definition to local placeholders. */
function resolve(value: unknown): unknown {
  if (typeof value === 'string' || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(resolve);
  const node = value as Json;
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => String(resolve(part))).join(separator);
  }
  if ('Fn::GetAtt' in node) {
    const [logicalId] = node['Fn::GetAtt'] as [string, string];
    return localFunctionArn(logicalId);
  }
  if ('Ref' in node) {
    const ref = node.Ref as string;
    return ref === 'AWS::Partition'
      ? 'aws'
      : ref === 'AWS::Region'
        ? 'us-east-1'
        : ref === 'AWS::AccountId'
          ? '000000000000'
          : ref;
  }
  return Object.fromEntries(Object.entries(node).map(([key, inner]) => [key, resolve(inner)]));
}

const referencedId = (value: unknown): string | undefined => {
  const node = value as Json | undefined;
  if (!node) return undefined;
  if (node['Fn::GetAtt']) return node['Fn::GetAtt'][0];
  if (node.Ref) return node.Ref;
  if (node['Fn::Join']) {
    for (const part of node['Fn::Join'][1] as unknown[]) {
      const id = referencedId(part);
      if (id) return id;
    }
  }
  return undefined;
};

/** The rules that expire objects by age; a rule on tags or sizes, or one that is disabled, is not applied. */
function expirationRules(configuration: Json | undefined): LifecycleRule[] {
  return ((configuration?.Rules ?? []) as Json[]).flatMap((rule) => {
    const filter = rule.Filter ?? {};
    const narrowed = Object.keys(filter).some((name) => name !== 'Prefix');
    if (rule.Status !== 'Enabled' || typeof rule.ExpirationInDays !== 'number' || narrowed) return [];
    return [{ id: String(rule.Id), prefix: rule.Prefix ?? filter.Prefix ?? '', days: rule.ExpirationInDays }];
  });
}

export function readTopology(templates: object[], tableName: (logicalId: string) => string): LocalTopology {
  const resources = Object.assign(
    {},
    ...templates.map((template) => (template as Template).Resources ?? {}),
  ) as Record<string, Resource>;
  const functions = new Map<string, LocalFunction>();
  const integrations = new Map<string, { functionId: string; timeoutMs?: number }>();
  const topology: LocalTopology = {
    functions,
    routes: [],
    stateMachines: [],
    tables: [],
    cors: null,
    throttle: null,
    lifecycle: [],
  };

  for (const [logicalId, resource] of Object.entries(resources)) {
    const props = resource.Properties ?? {};
    if (
      resource.Type === 'AWS::Lambda::Function' &&
      typeof resource.Metadata?.['photo-jobs:handler'] === 'string'
    ) {
      functions.set(logicalId, {
        logicalId,
        handler: resource.Metadata['photo-jobs:handler'] as string,
        image: props.PackageType === 'Image',
        timeoutSeconds: props.Timeout ?? 3,
        environment: props.Environment?.Variables ?? {},
        ...(typeof props.Code?.S3Key === 'string'
          ? { assetHash: props.Code.S3Key.replace(/\.zip$/, '') }
          : {}),
      });
    } else if (resource.Type === 'AWS::ApiGatewayV2::Api') {
      topology.cors = (props.CorsConfiguration as CorsConfiguration | undefined) ?? null;
    } else if (resource.Type === 'AWS::ApiGatewayV2::Stage') {
      const settings = props.DefaultRouteSettings as
        | { ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number }
        | undefined;
      if (settings?.ThrottlingRateLimit !== undefined && settings.ThrottlingBurstLimit !== undefined)
        topology.throttle = { rate: settings.ThrottlingRateLimit, burst: settings.ThrottlingBurstLimit };
    } else if (resource.Type === 'AWS::S3::Bucket') {
      topology.lifecycle.push(...expirationRules(props.LifecycleConfiguration));
    } else if (resource.Type === 'AWS::ApiGatewayV2::Integration') {
      const functionId = referencedId(props.IntegrationUri);
      const timeoutMs = typeof props.TimeoutInMillis === 'number' ? props.TimeoutInMillis : undefined;
      if (functionId) integrations.set(logicalId, { functionId, ...(timeoutMs ? { timeoutMs } : {}) });
    } else if (resource.Type === 'AWS::StepFunctions::StateMachine') {
      const definition = JSON.parse(String(resolve(props.DefinitionString)));
      topology.stateMachines.push({
        logicalId,
        ...(typeof props.StateMachineName === 'string' ? { name: props.StateMachineName } : {}),
        type: props.StateMachineType === 'EXPRESS' ? 'EXPRESS' : 'STANDARD',
        definition,
      });
    } else if (resource.Type === 'AWS::DynamoDB::Table' || resource.Type === 'AWS::DynamoDB::GlobalTable') {
      topology.tables.push({
        TableName: tableName(logicalId),
        KeySchema: props.KeySchema,
        AttributeDefinitions: props.AttributeDefinitions,
        GlobalSecondaryIndexes: props.GlobalSecondaryIndexes?.map((index: Record<string, unknown>) => ({
          IndexName: index.IndexName,
          KeySchema: index.KeySchema,
          Projection: index.Projection,
        })),
        BillingMode: 'PAY_PER_REQUEST',
      } as CreateTableCommandInput);
    }
  }
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::ApiGatewayV2::Route') continue;
    const integrationId = referencedId(resource.Properties?.Target);
    const integration = integrationId ? integrations.get(integrationId) : undefined;
    if (integration && functions.has(integration.functionId)) {
      topology.routes.push({ routeKey: resource.Properties!.RouteKey, ...integration });
    }
  }
  return topology;
}

/** The two stacks' templates as a synth wrote them into a cloud assembly folder. */
export async function readAssemblyTemplates(
  dir: string,
): Promise<{ data: CfnTemplate; service: CfnTemplate }> {
  const read = async (stack: string): Promise<CfnTemplate> => {
    const file = path.join(dir, `${stack}.template.json`);
    const text = await readFile(file, 'utf8').catch(() => {
      throw new Error(`${file} is missing: is ${dir} a cloud assembly of this app?`);
    });
    return JSON.parse(text) as CfnTemplate;
  };
  return { data: await read(stackNames.data), service: await read(stackNames.service) };
}
