import { describe, expect, it } from 'vitest';
import { masterKeyLoader } from '#aws/master-key.ts';
import type { Config } from '#config';
import { hashSecret } from '#core/keys/api-key.ts';

const cfg = (values: Partial<Config>) => ({ AWS_REGION: 'us-east-1', ...values }) as Config;
const KEY = 'pjm_0123456789abcdef0123';

function store(values: { secret?: string; parameter?: string }) {
  const reads: string[] = [];
  return {
    reads,
    read: {
      secret: async (arn: string) => {
        reads.push(arn);
        return values.secret ?? '';
      },
      parameter: async (name: string) => {
        reads.push(name);
        return values.parameter ?? '';
      },
    },
  };
}

describe('masterKeyLoader', () => {
  it('uses a deployed sha256 as it is, reading nothing', async () => {
    const { reads, read } = store({});
    const hash = hashSecret(KEY);
    expect(await masterKeyLoader(cfg({ MASTER_KEY_SHA256: hash }), read)()).toBe(hash);
    expect(reads).toEqual([]);
  });

  it('reads the key from Secrets Manager once and keeps only its hash', async () => {
    const { reads, read } = store({ secret: `${KEY}\n` });
    const load = masterKeyLoader(cfg({ MASTER_KEY_SECRET_ARN: 'arn:secret' }), read);
    expect(await load()).toBe(hashSecret(KEY));
    expect(await load()).toBe(hashSecret(KEY));
    expect(reads).toEqual(['arn:secret']);
  });

  it('reads the key from an SSM parameter', async () => {
    const { read } = store({ parameter: KEY });
    expect(await masterKeyLoader(cfg({ MASTER_KEY_PARAMETER_NAME: '/pj/master' }), read)()).toBe(
      hashSecret(KEY),
    );
  });

  it('has no master key when none is configured or the stored one is too short to be safe', async () => {
    expect(await masterKeyLoader(cfg({}), store({}).read)()).toBeNull();
    const short = store({ secret: 'short' }).read;
    expect(await masterKeyLoader(cfg({ MASTER_KEY_SECRET_ARN: 'arn:secret' }), short)()).toBeNull();
  });

  it('tries again after a failed read instead of keeping the failure', async () => {
    let calls = 0;
    const load = masterKeyLoader(cfg({ MASTER_KEY_SECRET_ARN: 'arn:secret' }), {
      secret: async () => {
        calls++;
        if (calls === 1) throw new Error('throttled');
        return KEY;
      },
      parameter: async () => '',
    });
    await expect(load()).rejects.toThrow('throttled');
    expect(await load()).toBe(hashSecret(KEY));
  });
});
