import type { Config } from '#config';
import { hashSecret } from '#core/keys/api-key.ts';

/**
 * The master key's sha256, from wherever the deployer keeps it (lib/constructs/master-key.ts): the hash
 * itself in MASTER_KEY_SHA256, or the key in Secrets Manager (MASTER_KEY_SECRET_ARN) or in an SSM
 * parameter (MASTER_KEY_PARAMETER_NAME, SecureString). The key is read once per cold start, hashed, and
 * only the hash is kept. `null`: no master key.
 */
export function masterKeyLoader(
  cfg: Config,
  read: { secret(arn: string): Promise<string>; parameter(name: string): Promise<string> } = {
    // Imported on the read, once per cold start where the key is kept there: other deployments never load the two SDK packages.
    secret: async (arn) => (await import('./master-key-reads.ts')).readSecret(cfg.AWS_REGION, arn),
    parameter: async (name) => (await import('./master-key-reads.ts')).readParameter(cfg.AWS_REGION, name),
  },
): () => Promise<string | null> {
  let loaded: Promise<string | null> | undefined;
  const load = async (): Promise<string | null> => {
    if (cfg.MASTER_KEY_SHA256) return cfg.MASTER_KEY_SHA256;
    const key = cfg.MASTER_KEY_SECRET_ARN
      ? await read.secret(cfg.MASTER_KEY_SECRET_ARN)
      : cfg.MASTER_KEY_PARAMETER_NAME
        ? await read.parameter(cfg.MASTER_KEY_PARAMETER_NAME)
        : '';
    const trimmed = key.trim();
    // A short key would be guessable; refusing it keeps the master key off rather than weak.
    if (trimmed.length < 16) return null;
    return hashSecret(trimmed);
  };
  return () => {
    // A failed read is tried again on the next request instead of disabling the key for the container.
    loaded ??= load().catch((error) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}
