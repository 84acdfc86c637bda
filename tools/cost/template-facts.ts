import type { CfnTemplate } from '../../lib/app.ts';
import { localFunctionArn, readTopology } from '../../local/template.ts';

/** What the synthesized templates say that a job's bill depends on. */
export interface TemplateFacts {
  /** Every function with a handler, by logical id. */
  functions: Record<string, FunctionFacts>;
  /** The function that runs the models (the container image). */
  inferenceFunction: string;
  jobWorkflow: {
    type: 'STANDARD' | 'EXPRESS';
    /** The states a successful job enters, in order: each one a state transition. */
    successPath: Array<{ name: string; type: string }>;
    /** The functions its tasks invoke, on any path. */
    functions: string[];
    /** The execution log's level (`OFF` without logging). */
    logLevel: string;
    tracing: boolean;
  };
  /** Bytes of one access log line's format, or null when the stage writes no access log. */
  accessLogFormatBytes: number | null;
  table: {
    keys: string[];
    indexes: Array<{ name: string; keys: string[]; projection: string; nonKeyAttributes: string[] }>;
  };
  /** The bucket's expiry rules by key prefix. */
  expiryDays: Record<string, number>;
}

interface FunctionFacts {
  handler: string;
  memoryMb: number;
  architecture: 'arm64' | 'x86_64';
  /** X-Ray active tracing. */
  tracing: boolean;
  /** Powertools' log level (POWERTOOLS_LOG_LEVEL); null when the function does not set one. */
  logLevel: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are free-form JSON, checked where read.
type Json = Record<string, any>;

/** A definition the cost model cannot walk; the model has to learn the new state first. */
export class UnfollowedStateError extends Error {
  override readonly name = 'UnfollowedStateError';
}

/** The facts of both stacks' templates (lib/app.ts `synthesizeTemplates`). */
export function templateFacts(templates: { data: CfnTemplate; service: CfnTemplate }): TemplateFacts {
  const all = [templates.data, templates.service];
  const topology = readTopology(all, (logicalId) => logicalId);
  const resources: Record<string, { Type: string; Properties?: Json }> = Object.assign(
    {},
    ...all.map((template) => template.Resources),
  );
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

  const functions: Record<string, FunctionFacts> = {};
  for (const fn of topology.functions.values()) {
    const props = resources[fn.logicalId]!.Properties ?? {};
    functions[fn.logicalId] = {
      handler: fn.handler,
      // CloudFormation's defaults when a property is absent.
      memoryMb: props.MemorySize ?? 128,
      architecture: props.Architectures?.[0] ?? 'x86_64',
      tracing: props.TracingConfig?.Mode === 'Active',
      logLevel: props.Environment?.Variables?.POWERTOOLS_LOG_LEVEL ?? null,
    };
  }
  const images = [...topology.functions.values()].filter((fn) => fn.image);
  if (images.length !== 1) throw new Error(`expected one container-image function, found ${images.length}`);
  const inferenceFunction = images[0]!.logicalId;

  const machines = topology.stateMachines.filter((machine) =>
    JSON.stringify(machine.definition).includes(localFunctionArn(inferenceFunction)),
  );
  if (machines.length !== 1) throw new Error(`expected one state machine running ${inferenceFunction}`);
  const machine = machines[0]!;
  const machineProps = resources[machine.logicalId]!.Properties ?? {};

  const stages = ofType('AWS::ApiGatewayV2::Stage');
  if (stages.length !== 1) throw new Error(`expected one HTTP API stage, found ${stages.length}`);
  const format = stages[0]![1].Properties?.AccessLogSettings?.Format;

  const tables = topology.tables;
  if (tables.length !== 1) throw new Error(`expected one table, found ${tables.length}`);
  const table = tables[0]!;
  const buckets = ofType('AWS::S3::Bucket');
  if (buckets.length !== 1) throw new Error(`expected one bucket, found ${buckets.length}`);
  const rules: Json[] = buckets[0]![1].Properties?.LifecycleConfiguration?.Rules ?? [];

  return {
    functions,
    inferenceFunction,
    jobWorkflow: {
      type: machineProps.StateMachineType ?? 'STANDARD',
      successPath: successPath(machine.definition),
      functions: Object.keys(functions).filter((fn) =>
        JSON.stringify(machine.definition).includes(localFunctionArn(fn)),
      ),
      logLevel: machineProps.LoggingConfiguration?.Level ?? 'OFF',
      tracing: machineProps.TracingConfiguration?.Enabled === true,
    },
    accessLogFormatBytes: typeof format === 'string' ? Buffer.byteLength(format) : null,
    table: {
      keys: table.KeySchema!.map((key) => key.AttributeName!),
      indexes: (table.GlobalSecondaryIndexes ?? []).map((index) => ({
        name: index.IndexName!,
        keys: index.KeySchema!.map((key) => key.AttributeName!),
        projection: index.Projection?.ProjectionType ?? 'ALL',
        nonKeyAttributes: index.Projection?.NonKeyAttributes ?? [],
      })),
    },
    expiryDays: Object.fromEntries(
      rules
        .filter((rule) => rule.Status === 'Enabled' && typeof rule.ExpirationInDays === 'number')
        .map((rule) => [rule.Prefix ?? '', rule.ExpirationInDays as number]),
    ),
  };
}

/**
 * The states from StartAt along `Next` to the end. A branching or nested state (Choice, Parallel, Map) has
 * no single success path: the model would have to be told which way a job goes, so it refuses.
 */
export function successPath(definition: Json): Array<{ name: string; type: string }> {
  const states: Record<string, Json> = definition.States ?? {};
  const path: Array<{ name: string; type: string }> = [];
  for (let name: string | undefined = definition.StartAt; name !== undefined; ) {
    const state = states[name];
    if (!state) throw new Error(`the definition has no state ${name}`);
    if (!['Task', 'Pass', 'Wait', 'Succeed'].includes(state.Type))
      throw new UnfollowedStateError(`the cost model does not follow a ${state.Type} state (${name})`);
    if (path.some((entered) => entered.name === name))
      throw new UnfollowedStateError(`the success path loops back to ${name}`);
    path.push({ name, type: state.Type });
    name = state.End === true || state.Type === 'Succeed' ? undefined : state.Next;
  }
  return path;
}
