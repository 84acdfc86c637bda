import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { type StorageArea, storageKeys } from '../../layers/core/storage-layout.ts';
import { bucketPrefixes, table as tableConfig } from '../config.ts';

/** Table actions of the service's own code (layers/aws/dynamodb-*.ts); never Scan, never `dynamodb:*`. */
export const tableActions = {
  workflow: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
  ],
  /** Plus deleting a file's records and writing a batch's items in bulk. */
  api: [
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:ConditionCheckItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
};

/** Every key in one of the bucket's areas (layers/core/storage-layout.ts). */
const objectsIn = (area: StorageArea) => `${bucketPrefixes[area].prefix}*`;

/** Only part of an area, by the shape of its keys: `*` stands for each id or name. */
const partialAreas = {
  /** A batch item's photo. */
  batchItems: `${storageKeys.batchItems('*')}*`,
  /** A key's stored background. */
  keyBackgrounds: storageKeys.keyBackground('*', '*'),
};

/** What the inference function reads and writes in the bucket (docs/decisions/0047-photojobs-construct-and-least-privilege.md). */
export const inferenceObjectAccess = {
  read: [
    objectsIn('sources'),
    objectsIn('assets'),
    objectsIn('uploads'),
    partialAreas.batchItems,
    partialAreas.keyBackgrounds,
    objectsIn('cache'),
    // A cache entry points at the results of the job that made them (layers/core/use-cases/inference-cache.ts).
    objectsIn('results'),
  ],
  write: [objectsIn('results'), objectsIn('cache')],
} as const;

/** What the batch archive task reads and writes in the bucket. */
export const batchArchiveObjectAccess = {
  read: [objectsIn('uploads'), objectsIn('batches'), objectsIn('results')],
  write: [objectsIn('batches')],
} as const;

/** The API functions read and write every area. */
export const apiObjectAccess = (Object.keys(bucketPrefixes) as StorageArea[]).map(objectsIn);

const escaped = (pattern: string) => pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Matches a policy resource that ends in one of the object patterns above (for cdk-nag's IAM5 findings). */
export const serviceObjectPatterns = new RegExp(
  `/(${[...apiObjectAccess, ...Object.values(partialAreas)].map(escaped).join('|')})$`,
);

/** Grants on the service's table and bucket, scoped as above. */
export function dataAccess(table: dynamodb.ITable, bucket: s3.IBucket) {
  const grantTable = (grantee: iam.IGrantable, actions: string[]) => {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions,
        resources: [table.tableArn, `${table.tableArn}/index/${tableConfig.gsi1.name}`],
      }),
    );
    table.encryptionKey?.grantEncryptDecrypt(grantee);
  };
  const grantObjects = (grantee: iam.IGrantable, actions: string[], patterns: readonly string[]) => {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions,
        resources: patterns.map((pattern) => bucket.arnForObjects(pattern)),
      }),
    );
    // Every "does it exist yet" check (the inference cache, a batch's download, an upload) lists the key
    // (layers/aws/s3-objects.ts), so listing is allowed only under the prefixes the role reads. A read of a
    // missing key may still be a 403 with this grant: the code never relies on its 404 (docs/decisions/0051-aws-behaviour-reproduced-locally.md).
    if (actions.includes('s3:GetObject')) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [...patterns] } },
        }),
      );
    }
  };
  /** The bucket's key, when it has one, for the objects granted. */
  const grantBucketKey = (grantee: iam.IGrantable) => bucket.encryptionKey?.grantEncryptDecrypt(grantee);
  return { table, bucket, grantTable, grantObjects, grantBucketKey };
}

export type DataAccess = ReturnType<typeof dataAccess>;
