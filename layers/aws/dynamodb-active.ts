import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Batch } from '#core/batches/batch.ts';
import type { Job } from '#core/jobs/job.ts';
import type { ActiveWork } from '#core/ports.ts';
import { doc, type Item } from './dynamodb-items.ts';

/**
 * Jobs and batches not yet at their end, by a filtered Scan of the table. A scan reads every record, so
 * its cost grows with the table: fine for the sweeper's schedule (every 5 minutes) on tables of some
 * hundred thousand records; past that a sparse index of unfinished work is the better tool
 * (docs/runbook.md, Stuck work).
 */
export function dynamodbActiveWork(client: DynamoDBClient, table: string): ActiveWork {
  async function scan<T>(sk: string, statuses: string[]): Promise<T[]> {
    const found: T[] = [];
    const values: Record<string, AttributeValue> = { ':sk': { S: sk } };
    statuses.forEach((status, i) => {
      values[`:s${i}`] = { S: status };
    });
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: `sk = :sk AND #status IN (${statuses.map((_, i) => `:s${i}`).join(', ')})`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) {
        const record = doc<T>(item as Item);
        if (record) found.push(record);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }
  return {
    activeJobs: () => scan<Job>('JOB', ['queued', 'processing']),
    activeBatches: () => scan<Batch>('BATCH', ['unpacking', 'processing']),
  };
}
