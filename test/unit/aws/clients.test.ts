import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamodbClient } from '#aws/clients.ts';
import { parseConfig } from '#config';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe('AWS clients', () => {
  // The keys CLI runs outside Lambda: a built-in default region would win over the user's profile and
  // write keys into another region's table.
  it('leave the region to the SDK chain (the profile) when AWS_REGION is unset', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'aws-config-'));
    try {
      await writeFile(path.join(dir, 'config'), '[default]\nregion = eu-west-2\n');
      delete process.env.AWS_REGION;
      delete process.env.AWS_PROFILE;
      process.env.AWS_CONFIG_FILE = path.join(dir, 'config');
      process.env.AWS_SHARED_CREDENTIALS_FILE = path.join(dir, 'credentials');
      const client = dynamodbClient(parseConfig(process.env));
      expect(await client.config.region()).toBe('eu-west-2');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('use AWS_REGION where Lambda sets it', async () => {
    const client = dynamodbClient(parseConfig({ AWS_REGION: 'ap-south-1' }));
    expect(await client.config.region()).toBe('ap-south-1');
  });
});
