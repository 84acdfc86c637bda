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

/**
 * The settings every client shares; `endpoint`, the service's from configuration. Each client is made
 * beside its adapter (s3-objects.ts, sfn-workflow.ts, eventbridge-events.ts), which is imported only where
 * it is reached (wiring.ts).
 */
export const clientSettings = (cfg: Config, endpoint: string | undefined) => ({
  // The SDK resolves a command's middleware stack on every call unless told to keep it per command class.
  // Nothing here adds middleware to a single command (the presigner resolves its own copy), so the kept
  // stack is the one every call would build: the same requests for less CPU per call.
  cacheMiddleware: true,
  region: cfg.AWS_REGION,
  ...(endpoint ? { endpoint } : {}),
  ...standInCredentials(endpoint),
});
