import { describe, expect, it } from 'vitest';
import {
  accessKeyOf,
  dynamodbRequests,
  eventsRequests,
  iamAuthorizer,
  intrinsicResolver,
  type LocalNames,
  missingKeyRequest,
  readPolicies,
  s3Requests,
  sfnRequests,
} from '../../../local/iam.ts';

const names: LocalNames = {
  table: () => 'photo-jobs-local',
  bucket: () => 'photo-jobs-local',
  eventBus: () => 'photo-jobs-local',
  stateMachine: (logicalId, resource) => resource.Properties?.StateMachineName ?? logicalId,
};
const TABLE_ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/photo-jobs-local';
const BUCKET_ARN = 'arn:aws:s3:::photo-jobs-local';
const MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:Svc-jobs';

/** Two stacks as the CDK app writes them: the data stack exports, the service stack imports. */
const data = {
  Resources: {
    Table: { Type: 'AWS::DynamoDB::Table', Properties: {} },
    Bucket: { Type: 'AWS::S3::Bucket', Properties: {} },
    BucketPolicy: {
      Type: 'AWS::S3::BucketPolicy',
      Properties: {
        Bucket: { Ref: 'Bucket' },
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              Resource: [
                { 'Fn::GetAtt': ['Bucket', 'Arn'] },
                { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Bucket', 'Arn'] }, '/*']] },
              ],
            },
          ],
        },
      },
    },
  },
  Outputs: {
    TableArn: { Value: { 'Fn::GetAtt': ['Table', 'Arn'] }, Export: { Name: 'Data:TableArn' } },
    BucketArn: { Value: { 'Fn::GetAtt': ['Bucket', 'Arn'] }, Export: { Name: 'Data:BucketArn' } },
  },
};
const service = {
  Resources: {
    Machine: { Type: 'AWS::StepFunctions::StateMachine', Properties: { StateMachineName: 'Svc-jobs' } },
    Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'Svc-jobs' } },
    Role: {
      Type: 'AWS::IAM::Role',
      Properties: {
        ManagedPolicyArns: [
          {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
              ],
            ],
          },
        ],
        Policies: [
          {
            PolicyName: 'inline',
            PolicyDocument: {
              Version: '2012-10-17',
              Statement: [
                { Effect: 'Allow', Action: 'events:PutEvents', Resource: { 'Fn::GetAtt': ['Bus', 'Arn'] } },
              ],
            },
          },
        ],
      },
    },
    Policy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'Role' }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Action: ['dynamodb:PutItem', 'dynamodb:Query'],
              Resource: [
                { 'Fn::ImportValue': 'Data:TableArn' },
                { 'Fn::Join': ['', [{ 'Fn::ImportValue': 'Data:TableArn' }, '/index/gsi1']] },
              ],
            },
            { Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: 'Machine' } },
            {
              Effect: 'Allow',
              Action: 'states:DescribeExecution',
              Resource: {
                'Fn::Join': [
                  '',
                  [
                    'arn:',
                    { Ref: 'AWS::Partition' },
                    ':states:',
                    { Ref: 'AWS::Region' },
                    ':',
                    { Ref: 'AWS::AccountId' },
                    ':execution:',
                    { 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: 'Machine' }] }] },
                    ':*',
                  ],
                ],
              },
            },
            {
              Effect: 'Allow',
              Action: 's3:GetObject',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
              Resource: { 'Fn::Sub': ['${Arn}/cache/*', { Arn: { 'Fn::ImportValue': 'Data:BucketArn' } }] },
            },
            {
              Effect: 'Allow',
              Action: 's3:ListBucket',
              Resource: { 'Fn::ImportValue': 'Data:BucketArn' },
              Condition: { StringLike: { 's3:prefix': ['cache/*'] } },
            },
          ],
        },
      },
    },
    Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
  },
};

describe('intrinsicResolver', () => {
  const { resolve } = intrinsicResolver([data, service], names);

  it('resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select/Split and pseudo parameters to local names', () => {
    expect(resolve({ Ref: 'Table' })).toBe('photo-jobs-local');
    expect(resolve({ 'Fn::GetAtt': ['Table', 'Arn'] })).toBe(TABLE_ARN);
    expect(resolve({ 'Fn::GetAtt': 'Bucket.Arn' })).toBe(BUCKET_ARN);
    expect(resolve({ Ref: 'Machine' })).toBe(MACHINE_ARN);
    expect(resolve({ 'Fn::GetAtt': ['Bus', 'Arn'] })).toBe(
      'arn:aws:events:us-east-1:000000000000:event-bus/photo-jobs-local',
    );
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
      resolve({ 'Fn::Sub': 'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:x/${Bucket.Arn}' }),
    ).toBe(`arn:aws:states:us-east-1:000000000000:x/${BUCKET_ARN}`);
    expect(resolve({ 'Fn::Select': [1, { 'Fn::Split': ['/', 'a/b/c'] }] })).toBe('b');
  });

  it('follows Fn::ImportValue to the value the other stack exports', () => {
    expect(resolve({ 'Fn::Join': ['', [{ 'Fn::ImportValue': 'Data:TableArn' }, '/index/gsi1']] })).toBe(
      `${TABLE_ARN}/index/gsi1`,
    );
  });

  it('refuses what it cannot resolve rather than guess', () => {
    expect(() => resolve({ 'Fn::ImportValue': 'Nobody:Exports' })).toThrow(/No stack exports/);
    expect(() => resolve({ Ref: 'Missing' })).toThrow(/no resource Missing/);
    expect(() => resolve({ 'Fn::GetAZs': '' })).toThrow(/No local resolution/);
  });
});

describe('readPolicies', () => {
  const policies = readPolicies([data, service], names);

  it('gives each function its role, with managed, inline and attached policies resolved', () => {
    const identity = policies.identities.get('Fn')!;
    expect(identity.principal).toBe('arn:aws:sts::000000000000:assumed-role/Role/Fn');
    expect(identity.policies.map((p) => p.name)).toEqual([
      'inline',
      'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
      'Policy',
    ]);
    expect(JSON.stringify(identity.policies)).not.toMatch(/Fn::|"Ref"/);
    expect(policies.bucketPolicies.get('photo-jobs-local')?.Statement[0].Resource).toEqual([
      BUCKET_ARN,
      `${BUCKET_ARN}/*`,
    ]);
  });

  it('refuses an AWS managed policy whose document it does not hold', () => {
    const unknown = structuredClone(service);
    unknown.Resources.Role.Properties.ManagedPolicyArns = [
      'arn:aws:iam::aws:policy/AdministratorAccess',
    ] as never;
    expect(() => readPolicies([data, unknown], names)).toThrow(/does not know the managed policy/);
  });
});

describe('request mapping', () => {
  it('maps DynamoDB operations to their actions on the table, or on the index a Query names', () => {
    expect(dynamodbRequests('PutItem', { TableName: 'photo-jobs-local' })).toEqual([
      { action: 'dynamodb:PutItem', resource: TABLE_ARN },
    ]);
    expect(dynamodbRequests('Query', { TableName: 'photo-jobs-local', IndexName: 'active' })).toEqual([
      { action: 'dynamodb:Query', resource: `${TABLE_ARN}/index/active` },
    ]);
  });

  it('maps a transaction to the item actions it performs, and TransactGetItems to GetItem', () => {
    const write = dynamodbRequests('TransactWriteItems', {
      TransactItems: [
        { Put: { TableName: 't' } },
        { Update: { TableName: 't' } },
        { Delete: { TableName: 't' } },
        { ConditionCheck: { TableName: 'u' } },
      ],
    });
    expect(write.map((r) => `${r.action} ${r.resource.split(':').pop()}`)).toEqual([
      'dynamodb:PutItem table/t',
      'dynamodb:UpdateItem table/t',
      'dynamodb:DeleteItem table/t',
      'dynamodb:ConditionCheckItem table/u',
    ]);
    expect(dynamodbRequests('TransactGetItems', { TransactItems: [{ Get: { TableName: 't' } }] })).toEqual([
      { action: 'dynamodb:GetItem', resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/t' },
    ]);
  });

  it('maps S3 requests to object actions, listing to s3:ListBucket with its prefix, copies to both ends', () => {
    const b = '/photo-jobs-local';
    expect(s3Requests('GET', `${b}/cache/a%20b/entry.json?x-id=GetObject`, {})).toEqual([
      { action: 's3:GetObject', resource: `${BUCKET_ARN}/cache/a b/entry.json` },
    ]);
    expect(s3Requests('HEAD', `${b}/uploads/u.png`, {})[0]!.action).toBe('s3:GetObject');
    expect(s3Requests('GET', `${b}?list-type=2&prefix=cache%2F`, {})).toEqual([
      { action: 's3:ListBucket', resource: BUCKET_ARN, context: { 's3:prefix': 'cache/' } },
    ]);
    expect(
      s3Requests('PUT', `${b}/results/r.png`, { 'x-amz-copy-source': '/photo-jobs-local/cache/c.png' }),
    ).toEqual([
      { action: 's3:PutObject', resource: `${BUCKET_ARN}/results/r.png` },
      { action: 's3:GetObject', resource: `${BUCKET_ARN}/cache/c.png` },
    ]);
    const multipart = [
      s3Requests('POST', `${b}/batches/z.zip?uploads`, {}),
      s3Requests('PUT', `${b}/batches/z.zip?partNumber=1&uploadId=u`, {}),
      s3Requests('POST', `${b}/batches/z.zip?uploadId=u`, {}),
      s3Requests('DELETE', `${b}/batches/z.zip?uploadId=u`, {}),
      s3Requests('DELETE', `${b}/batches/z.zip`, {}),
    ].map((requests) => requests[0]!.action);
    expect(multipart).toEqual([
      's3:PutObject',
      's3:PutObject',
      's3:PutObject',
      's3:AbortMultipartUpload',
      's3:DeleteObject',
    ]);
    expect(() => s3Requests('GET', `${b}/k?tagging`, {})).toThrow(/maps no S3 request/);
  });

  it('maps Step Functions and EventBridge requests to their machine, execution or bus', () => {
    expect(sfnRequests('StartExecution', { stateMachineArn: MACHINE_ARN })).toEqual([
      { action: 'states:StartExecution', resource: MACHINE_ARN },
    ]);
    expect(sfnRequests('DescribeExecution', { executionArn: 'arn:x:execution:m:e' })[0]!.resource).toBe(
      'arn:x:execution:m:e',
    );
    expect(eventsRequests('PutEvents', { Entries: [{ EventBusName: 'photo-jobs-local' }, {}] })).toEqual([
      {
        action: 'events:PutEvents',
        resource: 'arn:aws:events:us-east-1:000000000000:event-bus/photo-jobs-local',
      },
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:000000000000:event-bus/default' },
    ]);
  });

  it('reads the caller from the Authorization header or a presigned URL', () => {
    expect(
      accessKeyOf(
        'AWS4-HMAC-SHA256 Credential=FnKey/20250101/us-east-1/s3/aws4_request, SignedHeaders=host',
        '/',
      ),
    ).toBe('FnKey');
    expect(
      accessKeyOf(undefined, '/b/k?X-Amz-Credential=FnKey%2F20250101%2Fus-east-1%2Fs3%2Faws4_request'),
    ).toBe('FnKey');
    expect(accessKeyOf(undefined, '/b/k')).toBeUndefined();
  });
});

describe('iamAuthorizer', () => {
  const authorize = iamAuthorizer(readPolicies([data, service], names));

  it('allows what the role is granted and the admin key everything', async () => {
    expect(
      await authorize('Fn', dynamodbRequests('Query', { TableName: 'photo-jobs-local', IndexName: 'gsi1' })),
    ).toBeNull();
    expect(await authorize('Fn', [{ action: 's3:GetObject', resource: `${BUCKET_ARN}/cache/x` }])).toBeNull();
    expect(await authorize('S3RVER', [{ action: 'dynamodb:DeleteTable', resource: TABLE_ARN }])).toBeNull();
  });

  it("refuses the rest in AWS's words, and holds a listing to the granted prefix", async () => {
    const denied = await authorize('Fn', dynamodbRequests('GetItem', { TableName: 'photo-jobs-local' }));
    expect(denied?.message).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/Role/Fn is not authorized to perform: dynamodb:GetItem on resource: ${TABLE_ARN} because no identity-based policy allows the dynamodb:GetItem action`,
    );
    const list = (prefix: string) =>
      authorize('Fn', [{ action: 's3:ListBucket', resource: BUCKET_ARN, context: { 's3:prefix': prefix } }]);
    expect(await list('cache/abc/entry.json')).toBeNull();
    expect(await list('sources/abc')).not.toBeNull();
    expect(await authorize('Nobody', [{ action: 'dynamodb:GetItem', resource: TABLE_ARN }])).toMatchObject({
      unknownKey: true,
    });
  });

  it('answers a missing key 404 only to a role that may list the whole bucket, not one scoped by prefix', async () => {
    // Fn may list under cache/* only, as the service's roles may: its read of a missing key stays a 403.
    expect(await authorize('Fn', [missingKeyRequest('photo-jobs-local')])).not.toBeNull();
    const principal = 'arn:aws:sts::000000000000:assumed-role/ListerRole/Lister';
    const wholeBucket = iamAuthorizer({
      identities: new Map([
        [
          'Lister',
          {
            accessKeyId: 'Lister',
            roleName: 'ListerRole',
            principal,
            policies: [
              {
                name: 'list',
                policy: {
                  Version: '2012-10-17',
                  Statement: [{ Effect: 'Allow', Action: 's3:ListBucket', Resource: BUCKET_ARN }],
                },
              },
            ],
          },
        ],
      ]),
      bucketPolicies: new Map(),
    });
    expect(await wholeBucket('Lister', [missingKeyRequest('photo-jobs-local')])).toBeNull();
  });
});
