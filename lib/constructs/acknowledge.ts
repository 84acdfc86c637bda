import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';

/**
 * Findings of cdk-nag's AwsSolutions and Serverless packs that are accepted, each with its reason, on the
 * construct it concerns. Recorded through CDK's own `Validations` metadata, which cdk-nag reads: the
 * construct does not depend on cdk-nag (a dev dependency of this repository, run by the infra tests).
 */
export function acknowledge(scope: IConstruct, findings: Record<string, string>): void {
  Validations.of(scope).acknowledge(...Object.entries(findings).map(([id, reason]) => ({ id, reason })));
}

/** cdk-nag's spelling of a policy resource (`<LogicalId.Arn>/sources/*`), so that a finding can be named. */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/}/g, '>');
  const value = node as Record<string, unknown>;
  if (value['Fn::Join']) {
    const [delimiter, items] = value['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (value['Fn::Sub']) return flatten(value['Fn::Sub']);
  if (value['Fn::GetAtt']) {
    const [resource, attribute] = value['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (value['Fn::ImportValue']) return flatten(value['Fn::ImportValue']);
  if (value.Ref) return `<${flatten(value.Ref)}>`;
  return JSON.stringify(node);
}

/**
 * Acknowledges every wildcard resource (AwsSolutions-IAM5) in the policies under `scope`, each with the
 * reason of the first pattern that matches it. A wildcard that no pattern explains fails the synth, so a
 * new one is never accepted without a reason of its own. Call it once every grant is made.
 */
export function acknowledgeWildcardResources(scope: IConstruct, reasons: Array<[RegExp, string]>): void {
  const stack = Stack.of(scope);
  for (const policy of scope.node.findAll().filter((c): c is iam.CfnPolicy => c instanceof iam.CfnPolicy)) {
    const document = stack.resolve(policy.policyDocument) as { Statement?: { Resource?: unknown }[] };
    const findings: Record<string, string> = {};
    for (const statement of document.Statement ?? []) {
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      for (const resource of resources.map(flatten).filter((r) => r.includes('*'))) {
        const reason = reasons.find(([pattern]) => pattern.test(resource))?.[1];
        if (!reason) throw new Error(`${policy.node.path}: no reason given for the wildcard ${resource}`);
        findings[`AwsSolutions-IAM5[Resource::${resource}]`] = reason;
      }
    }
    acknowledge(policy, findings);
  }
}
