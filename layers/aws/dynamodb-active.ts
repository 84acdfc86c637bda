import { type AttributeValue, type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { Batch } from '#core/batches/batch.ts';
import type { Job } from '#core/jobs/job.ts';
import type { ActiveWork } from '#core/ports.ts';
import { TABLE_INDEXES } from '#core/storage-layout.ts';
import { type ActiveKind, activePartition, doc, type Item, isActive } from './dynamodb-items.ts';

/**
 * Jobs and batches not yet at their end, read from the sparse `active` index: one Query per shard, so the
 * cost follows the unfinished work, not the size of the table, and no role needs `dynamodb:Scan`.
 * An index is eventually consistent: a record that has just ended may still be listed for a moment. The
 * sweeper acts only past deadlines of minutes and re-reads each job before moving it, so that is harmless;
 * the status is checked here again all the same.
 */
export function dynamodbActiveWork(client: DynamoDBClient, table: string): ActiveWork {
  const { name, partitionKey, shards } = TABLE_INDEXES.active;

  async function shard<T>(kind: ActiveKind, index: number): Promise<T[]> {
    const found: T[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: table,
          IndexName: name,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': partitionKey },
          ExpressionAttributeValues: { ':pk': { S: activePartition(kind, index) } },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const record = doc<T & { status: string; followUpDue?: number }>(item as Item);
        if (record && isActive(kind, record)) found.push(record);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }

  async function all<T>(kind: ActiveKind): Promise<T[]> {
    const perShard = await Promise.all(Array.from({ length: shards }, (_, index) => shard<T>(kind, index)));
    return perShard.flat();
  }

  return {
    activeJobs: () => all<Job>('JOB'),
    activeBatches: () => all<Batch>('BATCH'),
  };
}
