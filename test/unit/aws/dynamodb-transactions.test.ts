import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conditionalPut, doc, transactWrite } from '#aws/dynamodb-items.ts';
import { jobItem } from '#aws/dynamodb-jobs.ts';
import { backoffDelayMs, TRANSACTION_CONFLICT_BACKOFF } from '#core/backoff.ts';
import { TransientError } from '#core/errors.ts';
import { itemBytes } from '../../../tools/cost/dynamodb-units.ts';
import { aJob } from '../core/fixtures.ts';

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

  const put = { TableName: 't', Item: { pk: { S: 'job' } }, ConditionExpression: 'version = :v' };
  const putConflict = {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException',
    message: 'Transaction is ongoing for the item',
  };

  it('puts outside a transaction, trying again while a transaction holds the item', async () => {
    answers = [putConflict, {}];
    expect(await conditionalPut(client, put, fast)).toBe(true);
    expect(requests).toBe(2);
  });

  it('answers false for a failed condition, and TransientError when the item stays held', async () => {
    answers = [
      {
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed',
      },
    ];
    expect(await conditionalPut(client, put, fast)).toBe(false);
    expect(requests).toBe(1);
    requests = 0;
    answers = [putConflict];
    const error = await conditionalPut(client, put, fast).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(requests).toBe(TRANSACTION_CONFLICT_BACKOFF.attempts);
  });
});

describe('a job item', () => {
  const finished = aJob({
    operation: 'background',
    status: 'success',
    stage: 'done',
    chargedCredits: 5,
    startedAt: '2026-11-22T08:00:01.000Z',
    finishedAt: '2026-11-22T08:00:05.000Z',
    output: {
      output_kind: 'image',
      inference_cached: false,
      model_version: { segmenter: 'birefnet-lite-1', plate_detector: 'yolo-plates-3' },
      url: '/api/v1/results/job_0123456789abcdefghjkmnpq/result.jpg',
      background_mask_url: '/api/v1/results/job_0123456789abcdefghjkmnpq/background_mask.png',
      mask_url: '/api/v1/results/job_0123456789abcdefghjkmnpq/background_mask.png',
      plates_detected: 1,
      plates: [
        {
          corners: [
            [1205, 908],
            [1477, 908],
            [1477, 986],
            [1205, 986],
          ],
          score: 0.91,
        },
      ],
      plate_hidden: false,
      composition: {
        framing: 'keep',
        aspect: 'keep',
        car_cut_by_edge: [],
        vehicles: 1,
        main_car_ambiguous: false,
        notes: [],
      },
    },
    version: 3,
  });

  it('reads back the job it was written from, and one written before documents were packed', () => {
    expect(doc(jobItem(finished))).toEqual(finished);
    expect(doc({ pk: { S: 'JOB#x' }, doc: { S: JSON.stringify(finished) } })).toEqual(finished);
  });

  it('stays under 1 KB when finished, so each write of it costs one unit, not two', () => {
    const wire = JSON.parse(
      JSON.stringify(jobItem(finished), (_, value) =>
        value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
      ),
    );
    expect(JSON.stringify(finished).length).toBeGreaterThan(1024);
    expect(itemBytes(wire)).toBeLessThan(1024);
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
