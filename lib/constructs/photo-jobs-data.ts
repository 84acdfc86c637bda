import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { abortIncompleteUploadsAfterDays, bucketPrefixes, table as tableConfig } from '../config.ts';
import { acknowledge } from './acknowledge.ts';

export interface PhotoJobsDataProps {
  /** What happens to the table and the bucket when they leave the stack. Default RETAIN. */
  removalPolicy?: RemovalPolicy;
}

/**
 * The stateful part: the single table (with its index and TTL) and the object bucket (with expiry per
 * prefix). `PhotoJobs` creates one unless it is given an existing table and bucket; a deployer who
 * keeps data in a stack of its own places this there and passes both on.
 */
export class PhotoJobsData extends Construct {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: PhotoJobsDataProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    // `Table`, not `TableV2`: the local server reads the key schema from an AWS::DynamoDB::Table.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: tableConfig.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableConfig.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableConfig.ttlAttribute,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: tableConfig.gsi1.name,
      partitionKey: { name: tableConfig.gsi1.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableConfig.gsi1.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    // The sweeper's view of unfinished work: a Query per shard instead of a Scan of the whole table.
    this.table.addGlobalSecondaryIndex({
      indexName: tableConfig.active.name,
      partitionKey: { name: tableConfig.active.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableConfig.active.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
      // A bucket that may be destroyed with the stack must be emptied first, or the deletion fails.
      autoDeleteObjects: removalPolicy === RemovalPolicy.DESTROY,
      lifecycleRules: [
        ...Object.entries(bucketPrefixes).flatMap(([id, { prefix, expireDays }]) =>
          expireDays === null ? [] : [{ id: `expire-${id}`, prefix, expiration: Duration.days(expireDays) }],
        ),
        {
          id: 'abort-incomplete-uploads',
          abortIncompleteMultipartUploadAfter: Duration.days(abortIncompleteUploadsAfterDays),
        },
      ],
      // Browsers load results through presigned URLs straight from the bucket, and send direct uploads
      // (POST /uploads) to presigned PUTs.
      cors: [
        {
          allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.PUT],
          allowedOrigins: ['*'],
          allowedHeaders: ['*'],
          maxAge: 3600,
        },
      ],
    });
    acknowledge(this.bucket, {
      'AwsSolutions-S1':
        'Objects are written and read only by the service (its roles) and through short-lived presigned GETs; ' +
        'server access logs would need a second bucket per deployment. CloudTrail data events cover audits.',
    });
  }
}
