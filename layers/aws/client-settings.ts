import type { Config } from '#config';

/**
 * The settings every client shares; `endpoint`, the service's from configuration. Credentials are the SDK's
 * default chain: in Lambda the role's, from the variables the runtime sets, and wherever else whoever runs
 * the code sets them (the local stack sets each function's, local/function-environment.ts). Each client is made
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
});
