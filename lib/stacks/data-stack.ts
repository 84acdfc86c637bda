import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { PhotoJobsData } from '../index.ts';

/**
 * The project's own app keeps the table and the bucket in a stack of their own, so that replacing or
 * tearing down the service never touches data; the service stack reuses them.
 */
export class DataStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    const { table, bucket } = new PhotoJobsData(this, 'Data');
    this.table = table;
    this.bucket = bucket;
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
  }
}
