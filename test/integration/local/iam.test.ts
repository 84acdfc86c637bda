import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '#core/keys/api-key.ts';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { iamAuthorizer, type LocalIdentity, type PolicyDocument } from '../../../local/iam.ts';
import { startLocalS3 } from '../../../local/s3.ts';
import { type LocalStack, startLocalStack } from '../../../local/stack.ts';
import { revoke } from '../support/iam.ts';
import { api, evalPhotoForm, hasShared, type RunningServer } from '../support/local-server.ts';

const BUCKET = 'photos';
const BUCKET_ARN = `arn:aws:s3:::${BUCKET}`;

const identity = (accessKeyId: string, statements: PolicyDocument['Statement']): [string, LocalIdentity] => [
  accessKeyId,
  {
    accessKeyId,
    roleName: `${accessKeyId}Role`,
    principal: `arn:aws:sts::000000000000:assumed-role/${accessKeyId}Role/${accessKeyId}`,
    policies: [{ name: 'policy', policy: { Version: '2012-10-17', Statement: statements } }],
  },
];
const readObjects = { Effect: 'Allow', Action: 's3:GetObject', Resource: `${BUCKET_ARN}/*` };

const clientFor = (endpoint: string, accessKeyId: string) =>
  new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
/** What S3 answered, as a caller sees it through the SDK: the status and the error's name. */
const outcome = async (request: Promise<unknown>) => {
  try {
    await request;
    return { status: 200 };
  } catch (error) {
    if (!(error instanceof S3ServiceException)) throw error;
    return { status: error.$metadata.httpStatusCode, name: error.name };
  }
};

describe('local S3 with IAM: a missing key is 404 only to a caller that may list the whole bucket', () => {
  let s3: Awaited<ReturnType<typeof startLocalS3>>;
  beforeAll(async () => {
    const authorize = iamAuthorizer({
      identities: new Map([
        // Reads every object, may list nothing: a role granted only s3:GetObject, as ours were.
        identity('Reader', [readObjects]),
        // Reads every object and may list under cache/ only: the grant the construct adds.
        identity('Lister', [
          readObjects,
          {
            Effect: 'Allow',
            Action: 's3:ListBucket',
            Resource: BUCKET_ARN,
            Condition: { StringLike: { 's3:prefix': ['cache/*'] } },
          },
        ]),
        // Reads every object and may list the whole bucket.
        identity('BucketLister', [
          readObjects,
          { Effect: 'Allow', Action: 's3:ListBucket', Resource: BUCKET_ARN },
        ]),
      ]),
      bucketPolicies: new Map(),
    });
    s3 = await startLocalS3({
      buckets: [BUCKET],
      iam: { authorize, accessKeyIds: ['Reader', 'Lister', 'BucketLister'] },
    });
    await clientFor(s3.endpoint, 'S3RVER').send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'cache/present.json', Body: '{}' }),
    );
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('answers 403 AccessDenied (GET) and 403 (HEAD) on a missing key to a caller without s3:ListBucket', async () => {
    const reader = clientFor(s3.endpoint, 'Reader');
    expect(
      await outcome(reader.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))),
    ).toEqual({
      status: 403,
      name: 'AccessDenied',
    });
    expect(
      (await outcome(reader.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))))
        .status,
    ).toBe(403);
    // The object that is there, the same caller reads.
    expect(
      await outcome(reader.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cache/present.json' }))),
    ).toEqual({
      status: 200,
    });
  });

  it('answers 404 NoSuchKey / NotFound to a caller allowed s3:ListBucket on the whole bucket', async () => {
    const lister = clientFor(s3.endpoint, 'BucketLister');
    expect(
      await outcome(lister.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))),
    ).toEqual({ status: 404, name: 'NoSuchKey' });
    expect(
      await outcome(lister.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))),
    ).toEqual({ status: 404, name: 'NotFound' });
  });

  it('answers 403 to a caller whose listing is scoped by prefix, which learns of a missing key by listing it', async () => {
    const lister = clientFor(s3.endpoint, 'Lister');
    // AWS does not document the s3:prefix of the check behind a missing key's 404, so a scoped grant earns none.
    expect(
      await outcome(lister.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))),
    ).toEqual({ status: 403, name: 'AccessDenied' });
    expect(
      (await outcome(lister.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'cache/missing.json' }))))
        .status,
    ).toBe(403);
    // The existence check the service makes (layers/aws/s3-objects.ts): a listing with the key as prefix.
    const listed = (key: string) =>
      lister.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: key, MaxKeys: 1 }));
    expect((await listed('cache/missing.json')).Contents ?? []).toEqual([]);
    expect((await listed('cache/present.json')).Contents?.map((object) => object.Key)).toEqual([
      'cache/present.json',
    ]);
    expect(
      await outcome(lister.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'sources/' }))),
    ).toMatchObject({ status: 403, name: 'AccessDenied' });
  });

  it("refuses an action the caller's role does not allow, and evaluates a presigned URL as its signer", async () => {
    const reader = clientFor(s3.endpoint, 'Reader');
    const denied = await reader
      .send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cache/new.json', Body: '{}' }))
      .catch((error: Error) => error);
    expect(denied).toMatchObject({ name: 'AccessDenied' });
    expect((denied as Error).message).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/ReaderRole/Reader is not authorized to perform: s3:PutObject on resource: ${BUCKET_ARN}/cache/new.json because no identity-based policy allows the s3:PutObject action`,
    );
    const url = (key: string) =>
      getSignedUrl(reader, new GetObjectCommand({ Bucket: BUCKET, Key: key }), { expiresIn: 60 });
    expect((await fetch(await url('cache/present.json'))).status).toBe(200);
    const missing = await fetch(await url('cache/missing.json'));
    expect(missing.status).toBe(403);
    expect(await missing.text()).toContain('<Code>AccessDenied</Code>');
  });
});

describe.skipIf(!hasShared)(
  'the local stack enforces the synthesized roles: a grant removed is an AccessDenied',
  () => {
    let stack: LocalStack;
    const masterKey = 'pjm_iam_test_master_key';

    beforeAll(async () => {
      stack = await startLocalStack({
        port: 0,
        masterKeySha256: hashSecret(masterKey),
        retryIntervalScale: 0,
        iam: true,
        // The API role without states:StartExecution on the job workflow.
        transformTemplates: revoke(
          'functions/api/create-job/handler.ts',
          'states:StartExecution',
          (resource) => JSON.stringify(resource).includes('JobWorkflowStateMachine'),
        ),
      });
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('answers a job creation with the spec error body and a 5xx, and the job ends failed', async () => {
      // Set-up outside any invocation acts as the admin identity.
      const { deps } = await import('#wiring/api.ts');
      const { key } = await createApiKey(deps(), { credits: 5 });
      const created = await fetch(`${stack.baseUrl}/jobs`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: evalPhotoForm('plates/eu/eu1.jpg'),
      });
      // A denial is the deployment's fault, not a passing one: 500, never a 503 that invites a retry.
      expect(created.status).toBe(500);
      const body = (await created.json()) as Record<string, unknown>;
      expect(body).toEqual({
        result: false,
        code: 500,
        message: expect.stringMatching(/may not be started/),
      });
      expect(JSON.stringify(body)).not.toContain('assumed-role');
      const client = api({ baseUrl: stack.baseUrl } as RunningServer, key);
      const { jobs } = (await client.get('/jobs')).body;
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ status: 'failed' });
    });
  },
);
