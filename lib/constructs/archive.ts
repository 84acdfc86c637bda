import * as iam from 'aws-cdk-lib/aws-iam';
import { archiveFunction, workflowHandlers } from '../config.ts';
import { ArchiveWorkflow } from './archive-workflow.ts';
import { batchArchiveObjectAccess } from './bucket-access.ts';
import { createTaskFunction, type ServiceContext } from './task-functions.ts';

/**
 * Unpacking a batch's archive (and building its download) takes minutes: a task of its own workflow. It
 * starts the batch's first items.
 */
export function createArchive(ctx: ServiceContext, stateMachineName: string) {
  const { data } = ctx;
  const batchArchive = createTaskFunction(
    ctx,
    workflowHandlers.batchArchive,
    {
      BUCKET_NAME: data.bucket.bucketName,
      STATE_MACHINE_ARN: ctx.stateMachineArn,
      ARCHIVE_STATE_MACHINE_ARN: ctx.archiveStateMachineArn,
    },
    archiveFunction,
  );
  data.grantTable(batchArchive, ['dynamodb:BatchWriteItem']);
  data.grantObjects(batchArchive, ['s3:GetObject'], batchArchiveObjectAccess.read);
  data.grantObjects(
    batchArchive,
    ['s3:PutObject', 's3:AbortMultipartUpload'],
    batchArchiveObjectAccess.write,
  );
  batchArchive.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['states:StartExecution'],
      resources: [ctx.stateMachineArn, ctx.archiveStateMachineArn],
    }),
  );
  data.grantBucketKey(batchArchive);
  const workflow = new ArchiveWorkflow(ctx.scope, 'ArchiveWorkflow', {
    batchArchive,
    stateMachineName,
    logRetention: ctx.logRetention,
    tracing: ctx.tracing,
  });
  return { batchArchive, workflow };
}
