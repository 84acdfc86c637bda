import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { Config } from '#config';

/** Stand-ins accept any credentials; real AWS uses the function's role. */
const standInCredentials = (endpoint: string | undefined) =>
  endpoint ? { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {};

export function awsClients(cfg: Config) {
  return {
    dynamodb: new DynamoDBClient({
      region: cfg.AWS_REGION,
      ...(cfg.DYNAMODB_ENDPOINT ? { endpoint: cfg.DYNAMODB_ENDPOINT } : {}),
      ...standInCredentials(cfg.DYNAMODB_ENDPOINT),
    }),
    s3: new S3Client({
      region: cfg.AWS_REGION,
      ...(cfg.S3_ENDPOINT ? { endpoint: cfg.S3_ENDPOINT } : {}),
      ...standInCredentials(cfg.S3_ENDPOINT),
      forcePathStyle: true,
      // Checksums only when S3 demands them: otherwise streamed uploads are stored with chunk framing
      // by S3-compatible stores, and presigned PUTs carry an empty-body checksum.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    sfn: new SFNClient({
      region: cfg.AWS_REGION,
      ...(cfg.SFN_ENDPOINT ? { endpoint: cfg.SFN_ENDPOINT } : {}),
      ...standInCredentials(cfg.SFN_ENDPOINT),
    }),
    eventbridge: new EventBridgeClient({
      region: cfg.AWS_REGION,
      ...(cfg.EVENTBRIDGE_ENDPOINT ? { endpoint: cfg.EVENTBRIDGE_ENDPOINT } : {}),
      ...standInCredentials(cfg.EVENTBRIDGE_ENDPOINT),
    }),
  };
}
