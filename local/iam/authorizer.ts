import { runSimulation } from '@cloud-copilot/iam-simulate';
import {
  ADMIN_ACCESS_KEY,
  LOCAL_ACCOUNT,
  LOCAL_SECRET_KEY,
  type LocalIdentity,
  type LocalPolicies,
} from './policies.ts';
import type { AuthRequest } from './requests.ts';

/** Why a request was refused, in AWS's words. */
export interface Denial {
  /** Set when the key itself is unknown (AWS's UnrecognizedClientException); else an access denial. */
  unknownKey?: true;
  principal: string;
  action: string;
  resource: string;
  message: string;
}

export type Authorizer = (accessKeyId: string | undefined, requests: AuthRequest[]) => Promise<Denial | null>;

/**
 * Evaluates requests as AWS would for the caller of a key: its identity policies, and the bucket policy for
 * S3 (same account: either may allow, an explicit Deny in either refuses). The admin key is always allowed.
 * Local calls travel over plain HTTP on loopback where AWS's SDK uses TLS, so aws:SecureTransport is true.
 */
export function iamAuthorizer(policies: LocalPolicies): Authorizer {
  const verdicts = new Map<string, Promise<string>>();
  const evaluate = (identity: LocalIdentity, request: AuthRequest): Promise<string> => {
    const cacheKey = JSON.stringify([identity.accessKeyId, request]);
    let verdict = verdicts.get(cacheKey);
    if (!verdict) {
      const bucket = request.action.startsWith('s3:')
        ? request.resource.slice('arn:aws:s3:::'.length).split('/')[0]
        : undefined;
      const resourcePolicy = bucket ? policies.bucketPolicies.get(bucket) : undefined;
      verdict = runSimulation(
        {
          request: {
            principal: identity.principal,
            action: request.action,
            resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
            contextVariables: {
              'aws:SecureTransport': 'true',
              'aws:PrincipalAccount': LOCAL_ACCOUNT,
              ...request.context,
            },
          },
          identityPolicies: identity.policies,
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(resourcePolicy ? { resourcePolicy } : {}),
        },
        {},
      ).then((result) => {
        if (result.resultType === 'error')
          throw new Error(`Local IAM could not evaluate: ${JSON.stringify(result.errors)}`);
        return result.overallResult;
      });
      if (verdicts.size > 10_000) verdicts.clear();
      verdicts.set(cacheKey, verdict);
    }
    return verdict;
  };
  const authorize = async (
    accessKeyId: string | undefined,
    requests: AuthRequest[],
  ): Promise<Denial | null> => {
    if (accessKeyId === ADMIN_ACCESS_KEY) return null;
    const identity = accessKeyId ? policies.identities.get(accessKeyId) : undefined;
    if (!identity) {
      const request = requests[0] ?? { action: 'unknown', resource: '*' };
      return {
        unknownKey: true,
        principal: 'anonymous',
        ...request,
        message: 'The security token included in the request is invalid.',
      };
    }
    for (const request of requests) {
      const verdict = await evaluate(identity, request);
      if (verdict === 'Allowed') continue;
      const because =
        verdict === 'ExplicitlyDenied'
          ? `with an explicit deny in ${request.action.startsWith('s3:') ? 'a resource-based' : 'an identity-based'} policy`
          : `because no identity-based policy allows the ${request.action} action`;
      return {
        principal: identity.principal,
        action: request.action,
        resource: request.resource,
        message: `User: ${identity.principal} is not authorized to perform: ${request.action} on resource: ${request.resource} ${because}`,
      };
    }
    return null;
  };
  return authorize;
}

/** The JSON-protocol services' (DynamoDB, Step Functions, EventBridge) answer to a refused request. */
export const accessDeniedJson = (denial: Denial) => ({
  __type: `com.amazon.coral.service#${denial.unknownKey ? 'UnrecognizedClientException' : 'AccessDeniedException'}`,
  Message: denial.message,
  message: denial.message,
});

/** A refusal thrown through a stand-in's request handling. */
export class AccessDeniedError extends Error {
  constructor(readonly denial: Denial) {
    super(denial.message);
    this.name = 'AccessDeniedError';
  }
}

/** The credentials of the admin identity: for set-up outside any invocation (the CLI, tests seeding data). */
export const LOCAL_ADMIN_CREDENTIALS = { accessKeyId: ADMIN_ACCESS_KEY, secretAccessKey: LOCAL_SECRET_KEY };
