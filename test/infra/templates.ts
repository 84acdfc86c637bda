import { Template } from 'aws-cdk-lib/assertions';
import { plainAssembly } from '../support/assembly.ts';

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** Both stacks, as synthesized without bundling once for the whole run (test/support/assembly.ts). */
export async function synthesize() {
  const { templates } = await plainAssembly();
  const data = Template.fromJSON(templates.data);
  const service = Template.fromJSON(templates.service);
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

function placeholder(intrinsic: unknown): string {
  const getAtt = (intrinsic as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAtt) return `\${Token[${getAtt[0]}.${getAtt[1]}]}`;
  const ref = (intrinsic as { Ref?: string }).Ref;
  if (ref) return `\${Token[${ref}]}`;
  throw new Error(`unexpected intrinsic in definition: ${JSON.stringify(intrinsic)}`);
}
