import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { Config } from '#config';

/**
 * Real AWS signs with the function's role. The stand-ins (local/iam.ts) tell roles apart by access key id:
 * the local Lambda runtime registers a hook, under this global symbol, naming the current invocation's key.
 * The clients are shared by every invocation in a process, so the key is read when each request is signed:
 * a getter on a credentials object the SDK keeps as it is (a provider function it would memoize, and every
 * concurrent call would sign as whoever called first). Without a hook (a CLI, a test seeding data), the
 * admin key of the stand-ins.
 */
const LOCAL_CALLER = Symbol.for('photo-jobs.local.caller-access-key');
const standInKeys = () => ({
  get accessKeyId(): string {
    const caller = (globalThis as { [LOCAL_CALLER]?: () => string | undefined })[LOCAL_CALLER];
    return caller?.() ?? 'S3RVER';
  },
  secretAccessKey: 'S3RVER',
});
const standInCredentials = (endpoint: string | undefined) => (endpoint ? { credentials: standInKeys() } : {});

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
