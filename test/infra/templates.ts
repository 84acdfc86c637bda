import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../lib/app.ts';

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** Both stacks, synthesized once per test file without bundling. */
export function synthesize() {
  // CDK's CloudFormation validation has its own test (synth.test.ts); here it would only cost seconds.
  const { dataStack, serviceStack } = buildApp({ bundle: false, validate: false });
  const data = Template.fromStack(dataStack);
  const service = Template.fromStack(serviceStack);
  return {
    data,
    service,
    dataJson: data.toJSON() as { Resources: Record<string, Resource>; Outputs: Record<string, unknown> },
    serviceJson: service.toJSON() as {
      Resources: Record<string, Resource>;
      Outputs: Record<string, unknown>;
      Parameters?: Record<string, unknown>;
    },
  };
}

export const resourcesOfType = (
  template: { Resources: Record<string, Resource> },
  type: string,
): [logicalId: string, resource: Resource][] =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

/**
 * Turns an `Fn::Join` of literal strings and `Fn::GetAtt`/`Ref` into one string. Intrinsics become
 * `${Token[<logicalId>.<attr>]}` so the definition parses as JSON and a Task's Resource names its function.
 */
export function resolveJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`not a string or Fn::Join: ${JSON.stringify(value)}`);
  const [separator, parts] = join;
  return parts.map((part) => (typeof part === 'string' ? part : placeholder(part))).join(separator);
}

export function placeholder(intrinsic: unknown): string {
  const getAtt = (intrinsic as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAtt) return `\${Token[${getAtt[0]}.${getAtt[1]}]}`;
  const ref = (intrinsic as { Ref?: string }).Ref;
  if (ref) return `\${Token[${ref}]}`;
  throw new Error(`unexpected intrinsic in definition: ${JSON.stringify(intrinsic)}`);
}
