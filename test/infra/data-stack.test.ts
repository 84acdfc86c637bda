import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { STORAGE_PREFIXES } from '../../layers/core/storage-layout.ts';
import { resourcesOfType, synthesize } from './templates.ts';

const { data, dataJson } = await synthesize();

describe('DataStack table', () => {
  it('is one on-demand table keyed by pk/sk with gsi1 and the sparse active index projecting everything', () => {
    data.resourceCountIs('AWS::DynamoDB::Table', 1);
    data.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'gsi1pk', AttributeType: 'S' },
        { AttributeName: 'gsi1sk', AttributeType: 'S' },
        { AttributeName: 'active_pk', AttributeType: 'S' },
        { AttributeName: 'active_sk', AttributeType: 'S' },
      ]),
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'active',
          KeySchema: [
            { AttributeName: 'active_pk', KeyType: 'HASH' },
            { AttributeName: 'active_sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('expires items by the ttl attribute and keeps point-in-time recovery', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('survives stack deletion and replacement', () => {
    data.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });
});

describe('DataStack bucket', () => {
  it('blocks every kind of public access and encrypts with SSE-S3', () => {
    data.resourceCountIs('AWS::S3::Bucket', 1);
    data.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
  });

  it('expires sources and assets after 7 days, results and batches after 30, stale multipart uploads after 1', () => {
    const [[, bucket] = []] = resourcesOfType(dataJson, 'AWS::S3::Bucket');
    const lifecycle = bucket?.Properties.LifecycleConfiguration as
      | { Rules: Record<string, unknown>[] }
      | undefined;
    const rules = lifecycle?.Rules ?? [];
    const expiryByPrefix = Object.fromEntries(
      rules.filter((rule) => rule.Prefix).map((rule) => [rule.Prefix, rule.ExpirationInDays]),
    );
    expect(expiryByPrefix).toEqual({
      'sources/': 7,
      'results/': 30,
      'assets/': 7,
      'batches/': 30,
      'cache/': 30,
      'uploads/': 2,
    });
    expect(rules).toContainEqual(
      expect.objectContaining({
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      }),
    );
    for (const rule of rules) expect(rule.Status).toBe('Enabled');
  });

  it('has one lifecycle rule per expiring area of the storage layout the code writes to, and none other', () => {
    const [[, bucket] = []] = resourcesOfType(dataJson, 'AWS::S3::Bucket');
    const lifecycle = bucket?.Properties.LifecycleConfiguration as
      | { Rules: Record<string, unknown>[] }
      | undefined;
    const rules = lifecycle?.Rules ?? [];
    const expiryByPrefix = Object.fromEntries(
      rules.filter((rule) => rule.Prefix).map((rule) => [rule.Prefix, rule.ExpirationInDays]),
    );
    const expected = Object.fromEntries(
      Object.values(STORAGE_PREFIXES)
        .filter((area) => area.expireDays !== null)
        .map((area) => [area.prefix, area.expireDays]),
    );
    expect(expiryByPrefix).toEqual(expected);
    // What is kept as long as its owner (keys/) has no rule at all.
    expect(Object.keys(expiryByPrefix)).not.toContain(STORAGE_PREFIXES.keys.prefix);
  });

  it('allows cross-origin GET, and PUT for direct uploads', () => {
    data.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [
          Match.objectLike({ AllowedMethods: Match.arrayWith(['GET', 'PUT']), AllowedOrigins: ['*'] }),
        ],
      },
    });
  });

  it('denies every request that does not use TLS', () => {
    data.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('is retained when the stack goes', () => {
    data.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
  });
});

describe('DataStack outputs', () => {
  it('names the table and the bucket', () => {
    expect(Object.keys(dataJson.Outputs)).toEqual(expect.arrayContaining(['TableName', 'BucketName']));
  });
});
