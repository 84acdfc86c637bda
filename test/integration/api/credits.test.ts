import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbAccounts } from '#aws/dynamodb-accounts.ts';
import { balanceFromLedger } from '#core/credits/ledger.ts';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import { LOCAL_TABLE } from '../../../local/stack.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import { bySoak } from '../../support/soak.ts';
import {
  adminDynamo,
  api,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

// Exactness shows at 40 concurrent jobs as at 200; the soak tier runs 200 (test/support/soak.ts).
const JOBS = bySoak(40, 200);
const START_CREDITS = JOBS * 10;

/** Photos with a plate succeed, photos without one fail with 803; they are sent in an order nobody chose. */
function photos(): Promise<Buffer[]> {
  return Promise.all(Array.from({ length: 30 }, (_, seed) => markedPhoto({ plate: seed % 2 === 0, seed })));
}

describe('credits under concurrency', () => {
  let server: RunningServer;

  beforeAll(async () => {
    // One key sends every job at once: the request throttling (docs/security.md) is raised to let it.
    server = await startServer({
      ...WITHOUT_MODELS,
      MAX_JOBS_IN_FLIGHT: '1000',
      RATE_LIMIT_KEY_BURST: '1000',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`charges exactly 5 per success over ${JOBS} concurrent jobs, and the ledger agrees`, {
    timeout: 600_000,
  }, async () => {
    const key = await server.createKey(START_CREDITS);
    const client = api(server, key);
    const pool = await photos();
    const created = await Promise.all(
      Array.from({ length: JOBS }, (_, i) => {
        const form = new FormData();
        form.append('file', new Blob([pool[Math.floor(Math.random() * pool.length)]!]), `car-${i}.jpg`);
        return client.postForm('/jobs', form);
      }),
    );
    expect(created.map((response) => response.status)).toEqual(Array(JOBS).fill(202));

    const finals = [];
    for (const response of created) finals.push((await client.waitForJob(response.body.id, 300_000)).body);
    const successes = finals.filter((job) => job.status === 'success').length;
    const failures = finals.filter((job) => job.status === 'failed').length;
    expect(successes + failures).toBe(JOBS);
    expect(successes).toBeGreaterThan(0);
    expect(failures).toBeGreaterThan(0);

    const quota = (await client.get('/quota')).body.quota;
    expect(quota.used_total).toBe(successes * 5);
    expect(quota.remaining).toBe(START_CREDITS - successes * 5);

    const dynamodb = await adminDynamo(server);
    const accounts = dynamodbAccounts(dynamodb, LOCAL_TABLE);
    const keyId = keyIdOf(hashSecret(key));
    const ledger = await accounts.ledger(keyId);
    expect(balanceFromLedger(ledger)).toEqual(await accounts.get(keyId));
    expect(ledger.filter((entry) => entry.kind === 'reserve')).toHaveLength(JOBS);
    expect(ledger.filter((entry) => entry.kind === 'charge')).toHaveLength(successes);
    expect(ledger.filter((entry) => entry.kind === 'release')).toHaveLength(failures);
    dynamodb.destroy();
  });
});
