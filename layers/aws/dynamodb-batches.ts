import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchWriteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  type TransactWriteItem,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { backoffDelayMs, UNPROCESSED_ITEMS_BACKOFF } from '#core/backoff.ts';
import type { Batch, BatchItem } from '#core/batches/batch.ts';
import { TransientError } from '#core/errors.ts';
import type { BatchRepository } from '#core/ports.ts';
import { activeWorkKeys, doc, type Item, keys, transactWrite } from './dynamodb-items.ts';
import { jobItem, movementWrites, reservationRefused } from './dynamodb-jobs.ts';

const BATCH_WRITE_SIZE = 25;

const batchRecord = (batch: Batch): Item => ({
  ...keys.batch(batch.id),
  ...activeWorkKeys('BATCH', batch),
  status: { S: batch.status },
  version: { N: String(batch.version) },
  doc: { S: JSON.stringify(batch) },
});

const itemRecord = (item: BatchItem): Item => ({
  ...keys.batchItem(item.batchId, item.index),
  doc: { S: JSON.stringify(item) },
});

/**
 * The batch record (`BATCH#<id>`/`BATCH`) holds what moves under its version: status, the waiting and
 * running lists, the counts. Each item is its own record (`BATCH#<id>`/`ITEM#<index>`), so a
 * 1000-photo archive stays far from DynamoDB's 400 KB item limit, and is written only when it ends.
 */
export function dynamodbBatches(
  client: DynamoDBClient,
  table: string,
  now: () => Date,
  maxInFlight: number,
): BatchRepository {
  const transact = (items: TransactWriteItem[]) => transactWrite(client, items);

  const guardedPut = (before: Batch, after: Batch): TransactWriteItem => ({
    Put: {
      TableName: table,
      Item: batchRecord({ ...after, version: before.version + 1 }),
      ConditionExpression: 'version = :v',
      ExpressionAttributeValues: { ':v': { N: String(before.version) } },
    },
  });

  async function writeAll(requests: WriteRequest[]): Promise<void> {
    for (let start = 0; start < requests.length; start += BATCH_WRITE_SIZE) {
      let pending = requests.slice(start, start + BATCH_WRITE_SIZE);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === UNPROCESSED_ITEMS_BACKOFF.attempts)
          throw new TransientError('Storing the batch items was throttled');
        if (attempt > 0) await sleep(backoffDelayMs(UNPROCESSED_ITEMS_BACKOFF, attempt, Math.random));
        const { UnprocessedItems } = await client.send(
          new BatchWriteItemCommand({ RequestItems: { [table]: pending } }),
        );
        pending = UnprocessedItems?.[table] ?? [];
      }
    }
  }

  return {
    async create(batch, items) {
      await writeAll(items.map((item) => ({ PutRequest: { Item: itemRecord(item) } })));
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: batchRecord(batch),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },

    async putItems(items) {
      await writeAll(items.map((item) => ({ PutRequest: { Item: itemRecord(item) } })));
    },
    async get(batchId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.batch(batchId), ConsistentRead: true }),
      );
      return doc<Batch>(Item);
    },

    async items(batchId) {
      const items: BatchItem[] = [];
      const input: QueryCommandInput = {
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :item)',
        ExpressionAttributeValues: { ':pk': keys.batch(batchId).pk, ':item': { S: 'ITEM#' } },
        ConsistentRead: true,
      };
      do {
        const page = await client.send(new QueryCommand(input));
        for (const record of page.Items ?? []) items.push(doc<BatchItem>(record)!);
        input.ExclusiveStartKey = page.LastEvaluatedKey;
      } while (input.ExclusiveStartKey);
      return items;
    },

    async item(batchId, index) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.batchItem(batchId, index), ConsistentRead: true }),
      );
      return doc<BatchItem>(Item);
    },

    async update(before, after, changes = {}) {
      const writes: TransactWriteItem[] = [guardedPut(before, after)];
      if (changes.item) writes.push({ Put: { TableName: table, Item: itemRecord(changes.item) } });
      const start = changes.start;
      if (start) {
        writes.push({
          Put: {
            TableName: table,
            Item: jobItem(start.job),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        });
        if (start.reservation) {
          writes.push(...movementWrites(table, start.reservation, maxInFlight, now().toISOString()));
        }
      }
      const failed = await transact(writes);
      if (!failed) return true;
      if (failed[0]) return false;
      const account = start?.reservation ? failed[writes.length - 2] : undefined;
      if (start?.reservation && account) reservationRefused(start.reservation, account, maxInFlight);
      throw new Error(`Updating batch ${before.id} was refused: ${JSON.stringify(failed)}`);
    },
  };
}
