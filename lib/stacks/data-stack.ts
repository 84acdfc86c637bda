import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { abortIncompleteUploadsAfterDays, bucketPrefixes, table as tableConfig } from '../config.ts';

/**
 * Everything stateful: the single table and the object bucket. Kept apart from the
 * service so that replacing or tearing down the service never touches data.
 */
export class DataStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    // `Table`, not `TableV2`: the local server reads the key schema from an AWS::DynamoDB::Table.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: tableConfig.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableConfig.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableConfig.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: tableConfig.gsi1.name,
      partitionKey: { name: tableConfig.gsi1.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableConfig.gsi1.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        ...Object.entries(bucketPrefixes).flatMap(([id, { prefix, expireDays }]) =>
          expireDays === null ? [] : [{ id: `expire-${id}`, prefix, expiration: Duration.days(expireDays) }],
        ),
        {
          id: 'abort-incomplete-uploads',
          abortIncompleteMultipartUploadAfter: Duration.days(abortIncompleteUploadsAfterDays),
        },
      ],
      // Browsers load results through presigned URLs straight from the bucket.
      cors: [
        {
          // PUT: browsers send direct uploads (POST /uploads) straight to presigned URLs.
          allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.PUT],
          allowedOrigins: ['*'],
          allowedHeaders: ['*'],
          maxAge: 3600,
        },
      ],
    });

    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
  }
}
