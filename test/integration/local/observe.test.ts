import {
  type CreateTableCommandInput,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../../local/dynamodb.ts';
import type { StandInCall } from '../../../local/observe.ts';

const table: CreateTableCommandInput = {
  TableName: 'items',
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'gpk', AttributeType: 'S' },
  ],
  KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  GlobalSecondaryIndexes: [
    {
      IndexName: 'gsi',
      KeySchema: [{ AttributeName: 'gpk', KeyType: 'HASH' }],
      Projection: { ProjectionType: 'ALL' },
    },
  ],
};

describe('the local DynamoDB observed (npm run cost -- trace)', () => {
  const calls: StandInCall[] = [];
  let dynamo: Awaited<ReturnType<typeof startLocalDynamo>>;
  let client: DynamoDBClient;
  beforeAll(async () => {
    dynamo = await startLocalDynamo({ tables: [table], observe: (call) => calls.push(call) });
    client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'caller', secretAccessKey: 'local' },
    });
  });
  afterAll(async () => {
    client.destroy();
    await dynamo.close();
  });
  const last = () => calls.at(-1) as Extract<StandInCall, { service: 'dynamodb' }>;

  it('reports each write with the item before and after it, and who signed it', async () => {
    await client.send(new PutItemCommand({ TableName: 'items', Item: { pk: { S: 'a' }, gpk: { S: 'g' } } }));
    expect(last()).toMatchObject({
      service: 'dynamodb',
      caller: 'caller',
      operation: 'PutItem',
      ok: true,
      readUnits: 0,
      writes: [{ table: 'items', before: null, after: { pk: { S: 'a' }, gpk: { S: 'g' } } }],
    });
    await client.send(
      new UpdateItemCommand({
        TableName: 'items',
        Key: { pk: { S: 'a' } },
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: '1' } },
      }),
    );
    expect(last().writes[0]!.after).toEqual({ pk: { S: 'a' }, gpk: { S: 'g' }, n: { N: '1' } });
  });

  it('reports a refused write as not ok, its item unchanged', async () => {
    await expect(
      client.send(
        new PutItemCommand({
          TableName: 'items',
          Item: { pk: { S: 'a' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ).rejects.toThrow();
    expect(last().ok).toBe(false);
    expect(last().writes[0]!.before).toEqual(last().writes[0]!.after);
  });

  it('reports a transaction’s items, its condition checks marked', async () => {
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: 'items', Item: { pk: { S: 'b' } } } },
          {
            ConditionCheck: {
              TableName: 'items',
              Key: { pk: { S: 'a' } },
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ],
      }),
    );
    expect(last().writes.map((write) => [write.after?.pk, write.checkOnly ?? false])).toEqual([
      [{ S: 'b' }, false],
      [{ S: 'a' }, true],
    ]);
  });

  it('reports the read units of a read without adding them to an answer that did not ask', async () => {
    const answer = await client.send(new GetItemCommand({ TableName: 'items', Key: { pk: { S: 'a' } } }));
    expect(answer.ConsumedCapacity).toBeUndefined();
    expect(last()).toMatchObject({ operation: 'GetItem', readUnits: 0.5, writes: [] });
    const asked = await client.send(
      new GetItemCommand({
        TableName: 'items',
        Key: { pk: { S: 'a' } },
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    expect(asked.ConsumedCapacity?.CapacityUnits).toBe(1);
    expect(last().readUnits).toBe(1);
  });
});
