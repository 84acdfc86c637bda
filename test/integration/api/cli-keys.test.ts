import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ADMIN_CREDENTIALS } from '../../../local/iam.ts';
import { LOCAL_BUCKET, LOCAL_TABLE, readRunningStack } from '../../../local/stack.ts';
import { api, type RunningServer, startServer } from '../support/local-server.ts';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

/**
 * `npm run cli -- keys … --table --bucket` manages the keys of a deployment. No AWS here: the "deployment"
 * is a running local server's table and bucket, reached the way a deployment is, by name through the SDK
 * (its endpoints stand in for AWS's), while DATA_DIR points at an empty folder the CLI must not use.
 */
describe('keys of a deployment from the CLI', () => {
  let server: RunningServer;
  let elsewhere: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startServer();
    elsewhere = await mkdtemp(path.join(tmpdir(), 'photo-jobs-cli-'));
    const endpoints = await readRunningStack(server.dataDir);
    if (!endpoints) throw new Error('the server wrote no stack file');
    env = {
      ...process.env,
      DATA_DIR: elsewhere,
      AWS_REGION: 'us-east-1',
      // A deployment's credentials come from the environment; here the stand-ins' admin's.
      AWS_ACCESS_KEY_ID: LOCAL_ADMIN_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_ADMIN_CREDENTIALS.secretAccessKey,
      DYNAMODB_ENDPOINT: endpoints.dynamodb,
      S3_ENDPOINT: endpoints.s3,
    };
  });
  afterAll(async () => {
    await server?.stop();
    if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
  });

  const cli = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'bin/cli.ts', ...args], { cwd: REPO_ROOT, env });

  it('creates a key in the named table that the service then accepts, with its credits', async () => {
    const { stdout } = await cli([
      'keys',
      'create',
      '--credits',
      '7',
      '--json',
      '--table',
      LOCAL_TABLE,
      '--bucket',
      LOCAL_BUCKET,
    ]);
    const created = JSON.parse(stdout.trim().split('\n').pop()!) as { key: string };
    const quota = await api(server, created.key).get('/quota');
    expect(quota.status).toBe(200);
    expect(quota.body).toMatchObject({ quota: { remaining: 7 } });
  });

  it('refuses --table without --bucket, naming both', async () => {
    const refused = await cli(['keys', 'create', '--table', LOCAL_TABLE]).catch((error) => error);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--table and --bucket go together');
  });
});
