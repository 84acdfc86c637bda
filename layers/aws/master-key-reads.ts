import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

/** The master key's two homes besides the environment; master-key.ts imports this only to read one. */
export async function readSecret(region: string | undefined, arn: string): Promise<string> {
  const client = new SecretsManagerClient({ region });
  const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  return SecretString ?? '';
}

export async function readParameter(region: string | undefined, name: string): Promise<string> {
  const client = new SSMClient({ region });
  const { Parameter } = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
  return Parameter?.Value ?? '';
}
