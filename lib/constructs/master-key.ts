import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ssm from 'aws-cdk-lib/aws-ssm';

/**
 * Where the master API key comes from. The key itself never sits in the template or in a function's
 * configuration: either only its sha256 is deployed, or the API functions read the key at cold start
 * from Secrets Manager or SSM (layers/aws/master-key.ts) and keep its hash.
 */
export abstract class MasterKey {
  /** No master key: only API keys (created with the CLI) and guests. */
  static none(): MasterKey {
    return new (class extends MasterKey {
      bind() {
        return {};
      }
    })();
  }

  /** The key's sha256 in hex, e.g. a `NoEcho` CfnParameter's value; empty disables it. */
  static fromSha256(sha256Hex: string): MasterKey {
    return new (class extends MasterKey {
      bind() {
        return { MASTER_KEY_SHA256: sha256Hex };
      }
    })();
  }

  /** A Secrets Manager secret whose string value is the key. */
  static fromSecret(secret: secretsmanager.ISecret): MasterKey {
    return new (class extends MasterKey {
      bind(grantee: iam.IGrantable) {
        secret.grantRead(grantee);
        return { MASTER_KEY_SECRET_ARN: secret.secretArn };
      }
    })();
  }

  /** An SSM parameter (a SecureString, ideally) whose value is the key. */
  static fromSsmParameter(parameter: ssm.IParameter): MasterKey {
    return new (class extends MasterKey {
      bind(grantee: iam.IGrantable) {
        parameter.grantRead(grantee);
        return { MASTER_KEY_PARAMETER_NAME: parameter.parameterName };
      }
    })();
  }

  /** Grants the API functions' role what it needs and returns their environment variables. */
  abstract bind(grantee: iam.IGrantable): Record<string, string>;
}
