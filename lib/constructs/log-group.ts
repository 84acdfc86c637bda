import { RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** Explicit, because the group Lambda or Step Functions would create on their own keeps logs forever. */
export function createLogGroup(
  scope: Construct,
  id: string,
  retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
): logs.LogGroup {
  return new logs.LogGroup(scope, id, { retention, removalPolicy: RemovalPolicy.DESTROY });
}
