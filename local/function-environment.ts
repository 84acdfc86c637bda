import { TUNABLE_SETTINGS } from '../layers/config.ts';
import { LOCAL_SECRET_KEY } from './iam/policies.ts';
import type { LocalFunction } from './template.ts';

/**
 * The role's credentials, as Lambda sets them: the stand-ins tell roles apart by access key id (local/iam.ts),
 * and a function's is its logical id. Expired from the start, so that the SDK reads the variables again at
 * every call: the clients of a process outlive an invocation, and one past its timeout signs with another key
 * (lambda-runtime.ts).
 */
const roleCredentials = (logicalId: string) => ({
  AWS_ACCESS_KEY_ID: logicalId,
  AWS_SECRET_ACCESS_KEY: LOCAL_SECRET_KEY,
  AWS_CREDENTIAL_EXPIRATION: new Date(0).toISOString(),
});

/** What Lambda's runtime sets that the machine gives here. */
const RUNTIME_FROM_HOST = [
  'PATH',
  'LANG',
  'HOME',
  'TMPDIR',
  'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
];

/** The local stack's own configuration of every function: where the stand-ins listen, the log switches. */
const LOCAL_FROM_HOST = [
  'DYNAMODB_ENDPOINT',
  'S3_ENDPOINT',
  'SFN_ENDPOINT',
  'EVENTBRIDGE_ENDPOINT',
  'POWERTOOLS_METRICS_DISABLED',
  'POWERTOOLS_TRACE_ENABLED',
  'AWS_LAMBDA_MAX_CONCURRENCY',
];

/**
 * A function's environment, as Lambda gives it: its template entry's `Environment.Variables` (resources by
 * their local names, through `resolve`), the variables Lambda's runtime sets, and, as local configuration,
 * the stand-ins' endpoints, the log switches, the tunables `npm start` was given (README, layers/config.ts)
 * and the stack's `overrides`. Nothing else of `host` (the stack process's environment) reaches it: a
 * function whose template entry names no table has no TABLE_NAME, as in AWS.
 */
export function functionEnvironment(
  fn: LocalFunction,
  resolve: (value: unknown) => unknown,
  host: Record<string, string | undefined>,
  overrides: Record<string, string> = {},
): Record<string, string> {
  const fromHost = (names: readonly string[]) =>
    Object.fromEntries(names.flatMap((name) => (host[name] === undefined ? [] : [[name, host[name]]])));
  const template = Object.fromEntries(
    Object.entries(fn.environment).map(([name, value]) => [name, String(resolve(value))]),
  );
  return {
    ...fromHost(RUNTIME_FROM_HOST),
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    ...roleCredentials(fn.logicalId),
    ...fromHost(LOCAL_FROM_HOST),
    ...template,
    // MODELS_DIR too: the models are where `npm start` fetched them, not in the image's /opt/models.
    ...fromHost([...TUNABLE_SETTINGS, 'MODELS_DIR']),
    ...overrides,
  };
}
