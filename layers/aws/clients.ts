import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { Config } from '#config';

/** Stand-ins accept any credentials; real AWS uses the function's role. */
const standInCredentials = (endpoint: string | undefined) =>
  endpoint ? { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {};

const endpointOf = (endpoint: string | undefined) => (endpoint ? { endpoint } : {});

/**
 * The SDK resolves a command's middleware stack on every call unless told to keep it per command class.
 * Nothing here adds middleware to a single command (the presigner resolves its own copy), so the kept
 * stack is the one every call would build: the same requests for less CPU per call.
 */
const common = { cacheMiddleware: true };

export const dynamodbClient = (cfg: Config) =>
  new DynamoDBClient({
    ...common,
    region: cfg.AWS_REGION,
    ...endpointOf(cfg.DYNAMODB_ENDPOINT),
    ...standInCredentials(cfg.DYNAMODB_ENDPOINT),
  });

export const s3Client = (cfg: Config) =>
  new S3Client({
    ...common,
    region: cfg.AWS_REGION,
    ...endpointOf(cfg.S3_ENDPOINT),
    ...standInCredentials(cfg.S3_ENDPOINT),
    forcePathStyle: true,
    // Checksums only when S3 demands them: otherwise streamed uploads are stored with chunk framing
    // by S3-compatible stores, and presigned PUTs carry an empty-body checksum.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

export const sfnClient = (cfg: Config) =>
  new SFNClient({
    ...common,
    region: cfg.AWS_REGION,
    ...endpointOf(cfg.SFN_ENDPOINT),
    ...standInCredentials(cfg.SFN_ENDPOINT),
  });

export const eventbridgeClient = (cfg: Config) =>
  new EventBridgeClient({
    ...common,
    region: cfg.AWS_REGION,
    ...endpointOf(cfg.EVENTBRIDGE_ENDPOINT),
    ...standInCredentials(cfg.EVENTBRIDGE_ENDPOINT),
  });

export function awsClients(cfg: Config) {
  return {
    dynamodb: dynamodbClient(cfg),
    s3: s3Client(cfg),
    sfn: sfnClient(cfg),
    eventbridge: eventbridgeClient(cfg),
  };
}
