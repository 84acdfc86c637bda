import { localFunctionArn } from '../template.ts';

/**
 * IAM on the embedded stack: every call a local Lambda invocation makes to a stand-in is evaluated, by
 * @cloud-copilot/iam-simulate (AGPL: imported from local/ and test/ only), against the policies the
 * synthesized template gives that function's role, plus the bucket policy for S3.
 *
 * Identity: the local stack calls each function with an access key id of its own, the function's logical
 * id (lambda-runtime.ts keeps it per invocation; layers/aws/clients.ts signs with it). The stand-ins read
 * it from the SigV4 Authorization header or a presigned URL's X-Amz-Credential. ADMIN_ACCESS_KEY is the
 * key of every caller outside an invocation (the CLI, tests seeding data): it may do everything, as an
 * administrator's credentials would.
 */

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT = '000000000000';
/** The key of callers that are no function: allowed everything. */
export const ADMIN_ACCESS_KEY = 'S3RVER';
/** The one secret of every local key pair (the stand-ins check presigned URLs with it). */
export const LOCAL_SECRET_KEY = 'S3RVER';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties and policies are free-form JSON.
export type Json = any;
type Resource = { Type: string; Properties?: Json };
type Template = {
  Resources?: Record<string, Resource>;
  Outputs?: Record<string, Json>;
  Parameters?: Record<string, { Default?: string }>;
};
export type PolicyDocument = { Version?: string; Statement: Json[] };

/** The local physical names of the template's resources. */
export interface LocalNames {
  table(logicalId: string): string;
  bucket(logicalId: string): string;
  eventBus(logicalId: string): string;
  /** The state machine's name (the last part of its ARN). */
  stateMachine(logicalId: string, resource: Resource): string;
}

/** The local ARN of a state machine, as the local stack and the policies both name it. */
export const localStateMachineArn = (name: string) =>
  `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${name}`;
const roleName = (logicalId: string, resource: Resource | undefined) =>
  (resource?.Properties?.RoleName as string | undefined) ?? logicalId;

/**
 * AWS managed policies the template attaches, by ARN: their documents are AWS's, not the template's. Only
 * what they allow on the stand-ins' services matters; a policy not listed here stops the stack from starting.
 */
const AWS_MANAGED: Record<string, PolicyDocument> = {
  'arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: '*',
      },
    ],
  },
};

/**
 * Resolves CloudFormation intrinsics over the templates of both stacks to local names and ARNs.
 * `parameters`: the values the stacks are deployed with, by parameter name (a parameter not given keeps its
 * template default).
 */
export function intrinsicResolver(
  templates: object[],
  names: LocalNames,
  parameters: Record<string, string> = {},
) {
  const resources: Record<string, Resource> = Object.assign(
    {},
    ...templates.map((template) => (template as Template).Resources ?? {}),
  );
  const parameterValues = new Map<string, string>();
  for (const template of templates) {
    for (const [name, parameter] of Object.entries((template as Template).Parameters ?? {}))
      if (parameter.Default !== undefined) parameterValues.set(name, parameter.Default);
  }
  for (const [name, value] of Object.entries(parameters)) parameterValues.set(name, value);
  const exports = new Map<string, Json>();
  for (const template of templates) {
    for (const output of Object.values((template as Template).Outputs ?? {})) {
      if (output.Export?.Name !== undefined) exports.set(String(output.Export.Name), output.Value);
    }
  }
  const resourceOf = (logicalId: string): Resource => {
    const resource = resources[logicalId];
    if (!resource) throw new Error(`The templates define no resource ${logicalId}`);
    return resource;
  };
  const ref = (name: string): string => {
    if (name === 'AWS::Partition') return 'aws';
    if (name === 'AWS::Region') return LOCAL_REGION;
    if (name === 'AWS::AccountId') return LOCAL_ACCOUNT;
    if (name === 'AWS::URLSuffix') return 'amazonaws.com';
    if (!(name in resources) && parameterValues.has(name)) return parameterValues.get(name)!;
    const resource = resourceOf(name);
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return names.table(name);
      case 'AWS::S3::Bucket':
        return names.bucket(name);
      case 'AWS::Events::EventBus':
        return names.eventBus(name);
      case 'AWS::StepFunctions::StateMachine':
        return localStateMachineArn(names.stateMachine(name, resource));
      case 'AWS::Lambda::Function':
        return name;
      case 'AWS::IAM::Role':
        return roleName(name, resource);
      case 'AWS::IAM::ManagedPolicy':
        return `arn:aws:iam::${LOCAL_ACCOUNT}:policy/${resource.Properties?.ManagedPolicyName ?? name}`;
      default:
        throw new Error(`No local value for Ref ${name} (${resource.Type})`);
    }
  };
  const getAtt = (logicalId: string, attribute: string): string => {
    const resource = resourceOf(logicalId);
    const unknown = () => new Error(`No local value for ${logicalId}.${attribute} (${resource.Type})`);
    if (attribute === 'Name' && resource.Type === 'AWS::StepFunctions::StateMachine')
      return names.stateMachine(logicalId, resource);
    if (attribute !== 'Arn') throw unknown();
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${names.table(logicalId)}`;
      case 'AWS::S3::Bucket':
        return `arn:aws:s3:::${names.bucket(logicalId)}`;
      case 'AWS::Events::EventBus':
        return `arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:event-bus/${names.eventBus(logicalId)}`;
      case 'AWS::StepFunctions::StateMachine':
        return localStateMachineArn(names.stateMachine(logicalId, resource));
      case 'AWS::Lambda::Function':
        return localFunctionArn(logicalId);
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${LOCAL_ACCOUNT}:role/${roleName(logicalId, resource)}`;
      default:
        throw unknown();
    }
  };
  const sub = (text: string, variables: Record<string, Json>): string =>
    text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
      if (name in variables) return String(resolve(variables[name]));
      const dot = name.indexOf('.');
      return dot > 0 && !name.startsWith('AWS::')
        ? getAtt(name.slice(0, dot), name.slice(dot + 1))
        : ref(name);
    });
  function resolve(value: Json): Json {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(resolve);
    const [key] = Object.keys(value);
    const arg = value[key as string];
    switch (key) {
      case 'Ref':
        return ref(arg);
      case 'Fn::GetAtt': {
        const [logicalId, attribute] = typeof arg === 'string' ? arg.split('.') : arg;
        return getAtt(logicalId, attribute);
      }
      case 'Fn::Join':
        return (resolve(arg[1]) as unknown[]).map(String).join(arg[0]);
      case 'Fn::Sub':
        return typeof arg === 'string' ? sub(arg, {}) : sub(arg[0], arg[1] ?? {});
      case 'Fn::Select':
        return (resolve(arg[1]) as unknown[])[Number(resolve(arg[0]))];
      case 'Fn::Split':
        return String(resolve(arg[1])).split(arg[0]);
      case 'Fn::ImportValue': {
        const name = String(resolve(arg));
        if (!exports.has(name)) throw new Error(`No stack exports ${name}`);
        return resolve(exports.get(name));
      }
      default:
        if (key?.startsWith('Fn::')) throw new Error(`No local resolution of ${key}`);
        return Object.fromEntries(Object.entries(value).map(([k, inner]) => [k, resolve(inner)]));
    }
  }
  return { resources, resolve };
}

/** A caller the stand-ins know: a function acting as its role. */
export interface LocalIdentity {
  accessKeyId: string;
  roleName: string;
  /** `arn:aws:sts::<account>:assumed-role/<role>/<function>`, as AWS names a Lambda function's session. */
  principal: string;
  policies: Array<{ name: string; policy: PolicyDocument }>;
}

export interface LocalPolicies {
  /** By access key id: the function's logical id. */
  identities: Map<string, LocalIdentity>;
  /** Bucket policies by bucket name. */
  bucketPolicies: Map<string, PolicyDocument>;
}

/** Each function's role and its identity policies, and the bucket policies, from the synthesized templates. */
export function readPolicies(templates: object[], names: LocalNames): LocalPolicies {
  const { resources, resolve } = intrinsicResolver(templates, names);
  const roleIdOf = (roleArn: Json): string | undefined => {
    if (roleArn?.['Fn::GetAtt']) return roleArn['Fn::GetAtt'][0];
    const arn = String(resolve(roleArn));
    return Object.keys(resources).find(
      (id) =>
        resources[id]!.Type === 'AWS::IAM::Role' && arn.endsWith(`:role/${roleName(id, resources[id])}`),
    );
  };
  const refsTo = (list: Json, logicalId: string) =>
    Array.isArray(list) && list.some((entry) => entry?.Ref === logicalId);
  const policiesOfRole = (roleId: string): LocalIdentity['policies'] => {
    const role = resources[roleId]!;
    const policies: LocalIdentity['policies'] = [];
    for (const inline of role.Properties?.Policies ?? []) {
      policies.push({ name: inline.PolicyName, policy: resolve(inline.PolicyDocument) });
    }
    for (const arnValue of role.Properties?.ManagedPolicyArns ?? []) {
      const arn = String(resolve(arnValue));
      const inTemplate = arnValue?.Ref && resources[arnValue.Ref];
      if (inTemplate) policies.push({ name: arn, policy: resolve(inTemplate.Properties.PolicyDocument) });
      else if (AWS_MANAGED[arn]) policies.push({ name: arn, policy: AWS_MANAGED[arn] });
      else
        throw new Error(
          `Local IAM does not know the managed policy ${arn}: add its document to local/iam.ts`,
        );
    }
    for (const [id, resource] of Object.entries(resources)) {
      const attached =
        (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') &&
        refsTo(resource.Properties?.Roles, roleId);
      if (attached) policies.push({ name: id, policy: resolve(resource.Properties.PolicyDocument) });
    }
    return policies;
  };
  const identities = new Map<string, LocalIdentity>();
  const bucketPolicies = new Map<string, PolicyDocument>();
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::Lambda::Function') {
      const roleId = roleIdOf(resource.Properties?.Role);
      if (!roleId) throw new Error(`Function ${logicalId} has no role in the templates`);
      const role = roleName(roleId, resources[roleId]);
      identities.set(logicalId, {
        accessKeyId: logicalId,
        roleName: role,
        principal: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${role}/${logicalId}`,
        policies: policiesOfRole(roleId),
      });
    } else if (resource.Type === 'AWS::S3::BucketPolicy') {
      bucketPolicies.set(
        String(resolve(resource.Properties?.Bucket)),
        resolve(resource.Properties?.PolicyDocument),
      );
    }
  }
  return { identities, bucketPolicies };
}
