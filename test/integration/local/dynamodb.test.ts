import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactionCanceledException,
  TransactionConflictException,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transactWrite } from '#aws/dynamodb-items.ts';
import { startLocalDynamo } from '../../../local/dynamodb.ts';
import { eventually } from '../../support/eventually.ts';

const tables: CreateTableCommandInput[] = [
  {
    TableName: 'accounts',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  },
  {
    TableName: 'events',
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
  },
];

const clientFor = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

/** Spend `cost` from an account and record an event, both or neither. */
const spend = (account: string, cost: number, event: string): TransactWriteItemsCommandInput => ({
  TransactItems: [
    {
      Update: {
        TableName: 'accounts',
        Key: { pk: { S: account } },
        UpdateExpression: 'SET balance = balance - :cost',
        ConditionExpression: 'balance >= :cost',
        ExpressionAttributeValues: { ':cost': { N: String(cost) } },
      },
    },
    {
      Put: {
        TableName: 'events',
        Item: { pk: { S: account }, sk: { S: event }, cost: { N: String(cost) } },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
  ],
});

describe('startLocalDynamo (in memory)', () => {
  let stack: Awaited<ReturnType<typeof startLocalDynamo>>;
  let db: DynamoDBClient;
  const balanceOf = async (pk: string) =>
    Number(
      (await db.send(new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: pk } } }))).Item?.balance?.N,
    );
  const open = (pk: string, balance: number) =>
    db.send(
      new PutItemCommand({ TableName: 'accounts', Item: { pk: { S: pk }, balance: { N: String(balance) } } }),
    );

  beforeAll(async () => {
    stack = await startLocalDynamo({ tables });
    db = clientFor(stack.endpoint);
  });
  afterAll(async () => {
    db.destroy();
    await stack.close();
  });

  it('puts, gets and queries through the real client', async () => {
    for (const sk of ['b', 'a', 'c']) {
      await db.send(new PutItemCommand({ TableName: 'events', Item: { pk: { S: 'q' }, sk: { S: sk } } }));
    }
    const got = await db.send(
      new GetItemCommand({ TableName: 'events', Key: { pk: { S: 'q' }, sk: { S: 'b' } } }),
    );
    expect(got.Item).toEqual({ pk: { S: 'q' }, sk: { S: 'b' } });
    const page = await db.send(
      new QueryCommand({
        TableName: 'events',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'q' } },
      }),
    );
    expect(page.Items?.map((i) => i.sk?.S)).toEqual(['a', 'b', 'c']);
  });

  it('commits every item of a transaction whose conditions hold', async () => {
    await open('alice', 10);
    await db.send(new TransactWriteItemsCommand(spend('alice', 3, 'job-1')));
    expect(await balanceOf('alice')).toBe(7);
    const event = await db.send(
      new GetItemCommand({ TableName: 'events', Key: { pk: { S: 'alice' }, sk: { S: 'job-1' } } }),
    );
    expect(event.Item?.cost).toEqual({ N: '3' });
  });

  it('leaves every item unchanged and names the failing condition when one fails', async () => {
    await open('bob', 10);
    await db.send(
      new PutItemCommand({
        TableName: 'events',
        Item: { pk: { S: 'bob' }, sk: { S: 'dup' }, note: { S: 'old' } },
      }),
    );

    const error = await db
      .send(new TransactWriteItemsCommand(spend('bob', 3, 'dup')))
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TransactionCanceledException);
    const cancelled = error as TransactionCanceledException;
    expect(cancelled.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]',
    );
    expect(cancelled.CancellationReasons).toEqual([
      { Code: 'None' },
      {
        Code: 'ConditionalCheckFailed',
        Message: 'The conditional request failed',
        Item: { pk: { S: 'bob' }, sk: { S: 'dup' }, note: { S: 'old' } },
      },
    ]);
    expect(await balanceOf('bob')).toBe(10);
    const event = await db.send(
      new GetItemCommand({ TableName: 'events', Key: { pk: { S: 'bob' }, sk: { S: 'dup' } } }),
    );
    expect(event.Item).toEqual({ pk: { S: 'bob' }, sk: { S: 'dup' }, note: { S: 'old' } });
  });

  it('never shows a plain read a transaction half applied or one it rolls back', async () => {
    // Each spend updates the balance first, then fails on its event, which exists: DynamoDB's readers
    // (GetItem serializable, Query read-committed) see the balance of 10 throughout.
    await open('erin', 10);
    await db.send(new PutItemCommand({ TableName: 'events', Item: { pk: { S: 'erin' }, sk: { S: 'dup' } } }));
    const reads: Promise<number>[] = [];
    const spends: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      spends.push(db.send(new TransactWriteItemsCommand(spend('erin', 1, 'dup'))).catch((e: unknown) => e));
      reads.push(balanceOf('erin'));
      reads.push(
        db
          .send(
            new QueryCommand({
              TableName: 'accounts',
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': { S: 'erin' } },
            }),
          )
          .then((page) => Number(page.Items?.[0]?.balance?.N)),
      );
    }
    for (const outcome of await Promise.all(spends))
      expect(outcome).toBeInstanceOf(TransactionCanceledException);
    expect(new Set(await Promise.all(reads))).toEqual(new Set([10]));
  });

  it('reports a failing ConditionCheck without writing the checked item', async () => {
    await open('carol', 1);
    const error = await db
      .send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: 'accounts',
                Key: { pk: { S: 'carol' } },
                ConditionExpression: 'balance > :z',
                ExpressionAttributeValues: { ':z': { N: '5' } },
              },
            },
            {
              ConditionCheck: {
                TableName: 'accounts',
                Key: { pk: { S: 'nobody' } },
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'ConditionalCheckFailed',
      'ConditionalCheckFailed',
    ]);
    expect(await balanceOf('carol')).toBe(1);
    const nobody = await db.send(new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'nobody' } } }));
    expect(nobody.Item).toBeUndefined();
  });

  it('still evaluates later conditions after a failure when their placeholders serve the update too', async () => {
    await open('dave', 5);
    const error = await db
      .send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: 'accounts',
                Key: { pk: { S: 'ghost' } },
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            {
              Update: {
                TableName: 'accounts',
                Key: { pk: { S: 'dave' } },
                UpdateExpression: 'SET #b = :next, #note = :note',
                ConditionExpression: '#b = :current',
                ExpressionAttributeNames: { '#b': 'balance', '#note': 'note' },
                ExpressionAttributeValues: {
                  ':next': { N: '4' },
                  ':note': { S: 'x' },
                  ':current': { N: '5' },
                },
              },
            },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'ConditionalCheckFailed',
      'None',
    ]);
    expect(await balanceOf('dave')).toBe(5);
  });

  it('lets exactly 20 of 50 concurrent 5-credit spends through a balance of 100', async () => {
    await open('busy', 100);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        db.send(new TransactWriteItemsCommand(spend('busy', 5, `spend-${i}`))),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(TransactionCanceledException);
    }
    expect(await balanceOf('busy')).toBe(0);
    const events = await db.send(
      new QueryCommand({
        TableName: 'events',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'busy' } },
      }),
    );
    expect(events.Count).toBe(20);
  });

  it('answers for a table recreated under the same name with its new key, not the one it had', async () => {
    // Table descriptions are kept in memory between requests; dropping and recreating must show through.
    const create = (key: string) =>
      db.send(
        new CreateTableCommand({
          TableName: 'reborn',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }],
          KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
        }),
      );
    const status = () =>
      db.send(new DescribeTableCommand({ TableName: 'reborn' })).then(
        ({ Table }) => Table?.TableStatus,
        () => 'GONE',
      );
    const until = async (wanted: string) => {
      expect(await eventually(status, (now) => now === wanted, { timeoutMs: 1000, intervalMs: 5 })).toBe(
        wanted,
      );
    };
    await create('pk');
    await until('ACTIVE');
    await db.send(new PutItemCommand({ TableName: 'reborn', Item: { pk: { S: 'a' } } }));
    await db.send(new DeleteTableCommand({ TableName: 'reborn' }));
    await until('GONE');
    await expect(
      db.send(new GetItemCommand({ TableName: 'reborn', Key: { pk: { S: 'a' } } })),
    ).rejects.toThrow(/not found/);
    await create('id');
    await until('ACTIVE');
    await db.send(new PutItemCommand({ TableName: 'reborn', Item: { id: { S: 'b' } } }));
    expect(
      (await db.send(new GetItemCommand({ TableName: 'reborn', Key: { id: { S: 'b' } } }))).Item,
    ).toEqual({ id: { S: 'b' } });
    await expect(
      db.send(new PutItemCommand({ TableName: 'reborn', Item: { pk: { S: 'c' } } })),
    ).rejects.toThrow(/Missing the key id/);
  });

  it('rejects two operations on one item and more than 100 items like AWS', async () => {
    const twice = spend('alice', 1, 'x');
    twice.TransactItems?.push({
      ConditionCheck: {
        TableName: 'accounts',
        Key: { pk: { S: 'alice' } },
        ConditionExpression: 'attribute_exists(pk)',
      },
    });
    await expect(db.send(new TransactWriteItemsCommand(twice))).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Transaction request cannot include multiple operations on one item',
    });
    const many = Array.from({ length: 101 }, (_, i) => ({
      Put: { TableName: 'accounts', Item: { pk: { S: `many-${i}` } } },
    }));
    await expect(db.send(new TransactWriteItemsCommand({ TransactItems: many }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('refuses items over 400 KB on PutItem, UpdateItem and TransactWriteItems, writing nothing', async () => {
    const big = { S: 'x'.repeat(400 * 1024) };
    await expect(
      db.send(new PutItemCommand({ TableName: 'accounts', Item: { pk: { S: 'big' }, payload: big } })),
    ).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Item size has exceeded the maximum allowed size',
    });
    await open('grows', 1);
    await expect(
      db.send(
        new UpdateItemCommand({
          TableName: 'accounts',
          Key: { pk: { S: 'grows' } },
          UpdateExpression: 'SET payload = :b',
          ExpressionAttributeValues: { ':b': big },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ValidationException', message: expect.stringMatching(/Item size/) });
    await open('carol', 10);
    const tooBig = spend('carol', 3, 'big');
    (tooBig.TransactItems![1]!.Put!.Item as Record<string, unknown>).payload = big;
    await expect(db.send(new TransactWriteItemsCommand(tooBig))).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Item size has exceeded the maximum allowed size',
    });
    expect(await balanceOf('carol')).toBe(10);
  });

  it('takes exactly 100 items in one transaction', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => ({
      Put: { TableName: 'accounts', Item: { pk: { S: `hundred-${i}` } } },
    }));
    await db.send(new TransactWriteItemsCommand({ TransactItems: hundred }));
    expect(await balanceOf('hundred-99')).toBeNaN(); // there, without a balance
    const got = await db.send(
      new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'hundred-99' } } }),
    );
    expect(got.Item).toEqual({ pk: { S: 'hundred-99' } });
  });

  it('reads several items at once with TransactGetItems', async () => {
    const out = await db.send(
      new TransactGetItemsCommand({
        TransactItems: [
          { Get: { TableName: 'accounts', Key: { pk: { S: 'alice' } }, ProjectionExpression: 'balance' } },
          { Get: { TableName: 'accounts', Key: { pk: { S: 'ghost' } } } },
        ],
      }),
    );
    expect(out.Responses).toEqual([{ Item: { balance: { N: '7' } } }, {}]);
  });
});

describe('startLocalDynamo (transactionConflicts)', () => {
  const started: Awaited<ReturnType<typeof startLocalDynamo>>[] = [];
  const withConflicts = async (share: number) => {
    const stack = await startLocalDynamo({ tables, transactionConflicts: share });
    started.push(stack);
    const db = clientFor(stack.endpoint);
    await db.send(
      new PutItemCommand({ TableName: 'accounts', Item: { pk: { S: 'shared' }, balance: { N: '100' } } }),
    );
    return db;
  };
  afterAll(async () => {
    for (const stack of started) await stack.close();
  });

  it("cancels a transaction that touches an item another one holds, in DynamoDB's words", async () => {
    const db = await withConflicts(1);
    const outcomes = await Promise.allSettled(
      ['one', 'two'].map((event) => db.send(new TransactWriteItemsCommand(spend('shared', 5, event)))),
    );
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const error = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect(error.message).toBe(
      'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]',
    );
    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
      { Code: 'None' },
    ]);
    const balance = await db.send(
      new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'shared' } } }),
    );
    expect(balance.Item?.balance).toEqual({ N: '95' });
  });

  it('loses no spend when the adapter retries the cancelled ones (30 at once, half cancelled)', async () => {
    const db = await withConflicts(0.5);
    const spends = Array.from({ length: 30 }, (_, i) => spend('shared', 2, `e${i}`).TransactItems!);
    const results = await Promise.all(spends.map((items) => transactWrite(db, items)));
    expect(results).toEqual(spends.map(() => null));
    const balance = await db.send(
      new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'shared' } } }),
    );
    expect(balance.Item?.balance).toEqual({ N: '40' });
  });

  it("refuses a plain write on an item a transaction holds, in DynamoDB's words, and loses no write", async () => {
    const db = await withConflicts(1);
    // A spend that also writes many events holds the account long enough for a plain write sent right
    // after it to meet it.
    const longSpend = (round: number): TransactWriteItemsCommandInput => ({
      TransactItems: [
        ...spend('shared', 5, `spend-${round}`).TransactItems!,
        ...Array.from({ length: 60 }, (_, i) => ({
          Put: { TableName: 'events', Item: { pk: { S: `filler-${round}` }, sk: { S: String(i) } } },
        })),
      ],
    });
    const plainSpend = new UpdateItemCommand({
      TableName: 'accounts',
      Key: { pk: { S: 'shared' } },
      UpdateExpression: 'SET balance = balance - :one',
      ExpressionAttributeValues: { ':one': { N: '1' } },
    });
    let applied = 0;
    const refusals: unknown[] = [];
    for (let round = 0; round < 10; round++) {
      const transaction = db.send(new TransactWriteItemsCommand(longSpend(round)));
      const plain = await db.send(plainSpend).then(
        () => true,
        (error: unknown) => {
          refusals.push(error);
          return false;
        },
      );
      await transaction;
      if (plain) applied++;
    }
    expect(refusals.length).toBeGreaterThan(0);
    for (const error of refusals) {
      expect(error).toBeInstanceOf(TransactionConflictException);
      expect((error as Error).message).toBe('Transaction is ongoing for the item');
    }
    const balance = await db.send(
      new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'shared' } } }),
    );
    expect(balance.Item?.balance).toEqual({ N: String(100 - 10 * 5 - applied) });
  });

  it('refuses a share outside 0..1', async () => {
    await expect(startLocalDynamo({ tables, transactionConflicts: 2 })).rejects.toThrow(RangeError);
  });
});

describe('startLocalDynamo (dataDir)', () => {
  it('keeps tables and items across a restart and releases its port on close', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'local-dynamo-'));
    try {
      const first = await startLocalDynamo({ dataDir, tables });
      const db1 = clientFor(first.endpoint);
      await db1.send(
        new PutItemCommand({ TableName: 'accounts', Item: { pk: { S: 'kept' }, balance: { N: '42' } } }),
      );
      db1.destroy();
      await first.close();
      await expect(fetch(first.endpoint)).rejects.toThrow();

      const second = await startLocalDynamo({ dataDir, tables });
      const db2 = clientFor(second.endpoint);
      const got = await db2.send(new GetItemCommand({ TableName: 'accounts', Key: { pk: { S: 'kept' } } }));
      db2.destroy();
      await second.close();
      expect(got.Item?.balance).toEqual({ N: '42' });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('adds an index the template gained to a table kept from an earlier run, items and all', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'local-dynamo-'));
    const events = tables[1]!;
    const withIndex: CreateTableCommandInput = {
      ...events,
      AttributeDefinitions: [...events.AttributeDefinitions!, { AttributeName: 'open', AttributeType: 'S' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'open',
          KeySchema: [{ AttributeName: 'open', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    };
    try {
      const first = await startLocalDynamo({ dataDir, tables });
      const db1 = clientFor(first.endpoint);
      for (const [sk, open] of [
        ['e1', 'yes'],
        ['e2', undefined],
      ] as const)
        await db1.send(
          new PutItemCommand({
            TableName: 'events',
            Item: { pk: { S: 'a' }, sk: { S: sk }, ...(open ? { open: { S: open } } : {}) },
          }),
        );
      db1.destroy();
      await first.close();

      const second = await startLocalDynamo({ dataDir, tables: [tables[0]!, withIndex] });
      const db2 = clientFor(second.endpoint);
      const indexed = await db2.send(
        new QueryCommand({
          TableName: 'events',
          IndexName: 'open',
          KeyConditionExpression: '#o = :yes',
          ExpressionAttributeNames: { '#o': 'open' },
          ExpressionAttributeValues: { ':yes': { S: 'yes' } },
        }),
      );
      const all = await db2.send(
        new QueryCommand({
          TableName: 'events',
          KeyConditionExpression: 'pk = :a',
          ExpressionAttributeValues: { ':a': { S: 'a' } },
        }),
      );
      db2.destroy();
      await second.close();
      expect(indexed.Items?.map((item) => item.sk?.S)).toEqual(['e1']);
      expect(all.Items?.map((item) => item.sk?.S)).toEqual(['e1', 'e2']);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
