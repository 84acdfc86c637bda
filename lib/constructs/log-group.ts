import { Names, RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** Explicit, because the group Lambda or Step Functions would create on their own keeps logs forever. */
export function createLogGroup(
  scope: Construct,
  id: string,
  retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
  logGroupName?: string,
): logs.LogGroup {
  return new logs.LogGroup(scope, id, { retention, removalPolicy: RemovalPolicy.DESTROY, logGroupName });
}

/**
 * Step Functions delivers its logs as a vended log source: into a group named outside `/aws/vendedlogs/`
 * it adds the group to the account's CloudWatch Logs resource policy, which holds at most 5,120 characters
 * and so breaks deployments once enough groups are listed. Under the prefix, no policy entry is written.
 * The name is unique per stack and construct path, as CDK's generated names are.
 */
export function createVendedLogGroup(
  scope: Construct,
  id: string,
  retention?: logs.RetentionDays,
): logs.LogGroup {
  const unique = Names.uniqueResourceName(scope, { maxLength: 200, separator: '-' });
  return createLogGroup(scope, id, retention, `/aws/vendedlogs/states/${unique}-${id}`);
}
