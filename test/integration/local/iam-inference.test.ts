import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '#core/keys/api-key.ts';
import { createApiKey } from '#core/use-cases/create-api-key.ts';
import { inference } from '../../../lib/config.ts';
import { type LocalStack, startLocalStack } from '../../../local/stack.ts';
import { revoke } from '../support/iam.ts';
import { api, evalPhotoForm, hasShared, type RunningServer } from '../support/local-server.ts';

// A stack of its own (one per test file): the handlers' clients are module singletons of one stack.
describe.skipIf(!hasShared)('a denied call inside the workflow', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack({
      port: 0,
      masterKeySha256: hashSecret('pjm_iam_inference_master_key'),
      retryIntervalScale: 0,
      iam: true,
      // The inference role may no longer write results: a construct that forgot that grant.
      transformTemplates: revoke(inference.handler, 's3:PutObject', (resource) =>
        JSON.stringify(resource).includes('results/'),
      ),
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('ends the job failed with a clear error, not retried as transient, and releases its credits', async () => {
    const { deps } = await import('#wiring/api.ts');
    const { key } = await createApiKey(deps(), { credits: 5 });
    const client = api({ baseUrl: stack.baseUrl } as RunningServer, key);
    const created = await client.postForm(
      '/jobs',
      evalPhotoForm('plates/eu/eu1.jpg', { mode: 'plate_mask' }),
    );
    expect(created.status).toBe(202);
    const job = await client.waitForJob(created.body.job_id, 120_000);
    expect(job.body).toMatchObject({
      status: 'failed',
      error: { code: 500, message: expect.stringMatching(/not allowed an AWS call/) },
    });
    expect(JSON.stringify(job.body)).not.toContain('assumed-role');
    expect((await client.get('/quota')).body.quota).toMatchObject({ remaining: 5, used_total: 0 });
  });
});
