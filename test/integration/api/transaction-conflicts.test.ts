import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbAccounts } from '#aws/dynamodb-accounts.ts';
import { balanceFromLedger } from '#core/credits/ledger.ts';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import { LOCAL_TABLE } from '../../../local/stack.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  adminDynamo,
  api,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

const JOBS = 40;
const START_CREDITS = 200;

/**
 * DynamoDB cancels transactions that overlap on one item (TransactionConflict). Every reserve, charge and
 * release writes the key's account item, so one key's concurrent jobs collide all the time; the local
 * table is told to cancel 30% of the overlapping ones.
 */
describe('jobs under injected DynamoDB transaction conflicts', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      ...WITHOUT_MODELS,
      LOCAL_DYNAMODB_TRANSACTION_CONFLICTS: '0.3',
      MAX_JOBS_IN_FLIGHT: '1000',
      RATE_LIMIT_KEY_BURST: '1000',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`answers ${JOBS} concurrent creations on one key without a 5xx, ends every job, and the credits add up`, {
    timeout: 300_000,
  }, async () => {
    const key = await server.createKey(START_CREDITS);
    const client = api(server, key);
    const failing = (i: number) => i % 2 === 1;
    // analyze (1 credit) succeeds on a photo with a plate; plate (5 credits) fails with 803 on one without,
    // and its 5 credits are released.
    const [withPlate, withoutPlate] = await Promise.all([markedPhoto(), markedPhoto({ plate: false })]);
    const created = await Promise.all(
      Array.from({ length: JOBS }, (_, i) => {
        const form = new FormData();
        form.append('mode', failing(i) ? 'plate' : 'analyze');
        form.append(
          'file',
          new Blob([failing(i) ? withoutPlate : withPlate], { type: 'image/jpeg' }),
          'car.jpg',
        );
        return client.postForm('/jobs', form);
      }),
    );
    expect(created.map((response) => response.status)).toEqual(Array(JOBS).fill(202));

    const finals = [];
    for (const response of created) finals.push((await client.waitForJob(response.body.id, 240_000)).body);
    expect(finals.map((job) => job.status)).toEqual(
      finals.map((_, i) => (failing(i) ? 'failed' : 'success')),
    );
    for (const [i, job] of finals.entries()) if (failing(i)) expect(job.code, job.id).toBe(803);

    const dynamodb = await adminDynamo(server);
    const accounts = dynamodbAccounts(dynamodb, LOCAL_TABLE);
    const keyId = keyIdOf(hashSecret(key));
    const ledger = await accounts.ledger(keyId);
    const sum = (kind: string) =>
      ledger.filter((entry) => entry.kind === kind).reduce((total, entry) => total + entry.amount, 0);
    const account = await accounts.get(keyId);
    dynamodb.destroy();

    expect(ledger.filter((entry) => entry.kind === 'reserve')).toHaveLength(JOBS);
    expect(sum('reserve')).toBe(sum('charge') + sum('release'));
    expect(sum('charge')).toBe(JOBS / 2);
    expect(account).toEqual({ available: START_CREDITS - sum('charge'), reserved: 0, usedTotal: JOBS / 2 });
    expect(balanceFromLedger(ledger)).toEqual(account);
    expect((await client.get('/quota')).body.quota).toMatchObject({
      remaining: START_CREDITS - JOBS / 2,
      used_total: JOBS / 2,
    });
  });
});
