import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { transactWrite } from '#aws/dynamodb-items.ts';
import { backoffDelayMs, TRANSACTION_CONFLICT_BACKOFF } from '#core/backoff.ts';
import { TransientError } from '#core/errors.ts';

const conflict = {
  __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
  Message:
    'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
  CancellationReasons: [
    { Code: 'None' },
    { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
  ],
};
const conditionFailed = {
  __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
  Message:
    'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]',
  CancellationReasons: [
    { Code: 'None' },
    { Code: 'ConditionalCheckFailed', Item: { pk: { S: 'a' }, available: { N: '1' } } },
  ],
};
const items: TransactWriteItem[] = [
  { Put: { TableName: 't', Item: { pk: { S: 'job' } } } },
  { Put: { TableName: 't', Item: { pk: { S: 'a' } } } },
];
const fast = { ...TRANSACTION_CONFLICT_BACKOFF, baseMs: 1, capMs: 2 };

/** DynamoDB's answers, one per request, in order; the last one repeats. */
describe('transactWrite (the real client against scripted DynamoDB answers)', () => {
  let answers: object[] = [];
  let requests = 0;
  let server: http.Server;
  let client: DynamoDBClient;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume().on('end', () => {
        const answer = answers[Math.min(requests++, answers.length - 1)]!;
        res.writeHead('__type' in answer ? 400 : 200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });
  afterAll(() => {
    client.destroy();
    server.close();
  });
  beforeEach(() => {
    requests = 0;
  });

  it('goes through when a conflict clears on a later try', async () => {
    answers = [conflict, conflict, {}];
    expect(await transactWrite(client, items, fast)).toBeNull();
    expect(requests).toBe(3);
  });

  it('raises TransientError, which the workflow retries, when conflicts outlast every try', async () => {
    answers = [conflict];
    const error = await transactWrite(client, items, fast).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).name).toBe('TransientError');
    expect(requests).toBe(TRANSACTION_CONFLICT_BACKOFF.attempts);
  });

  it('answers a failed condition at once with the old image, as before', async () => {
    answers = [conditionFailed];
    expect(await transactWrite(client, items, fast)).toEqual([
      false,
      { pk: { S: 'a' }, available: { N: '1' } },
    ]);
    expect(requests).toBe(1);
  });
});

describe('backoffDelayMs', () => {
  it('waits a random share of a doubling delay that never passes the cap', () => {
    const policy = { attempts: 8, baseMs: 25, capMs: 1000 };
    expect([1, 2, 3, 7, 20].map((attempt) => backoffDelayMs(policy, attempt, () => 0.999999))).toEqual([
      24, 49, 99, 999, 999,
    ]);
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0);
  });
});
