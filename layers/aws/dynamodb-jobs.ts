import {
  type DynamoDBClient,
  GetItemCommand,
  TransactionCanceledException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { InsufficientCreditsError } from '#core/errors.ts';
import { IDEMPOTENCY_TTL_SECONDS, type IdempotencyRecord } from '#core/idempotency/idempotency.ts';
import type { Job } from '#core/jobs/job.ts';
import type { CreditMovement, IdempotencyClaim, JobRepository } from '#core/ports.ts';
import {
  doc,
  epochSeconds,
  type Item,
  isExpired,
  keys,
  ownerPartition,
  seqSortKey,
  str,
} from './dynamodb-items.ts';

function jobItem(job: Job): Item {
  return {
    ...keys.job(job.id),
    gsi1pk: { S: ownerPartition(job.ownerId) },
    gsi1sk: { S: seqSortKey(job.seq) },
    status: { S: job.status },
    version: { N: String(job.version) },
    doc: { S: JSON.stringify(job) },
  };
}

/** One credit movement as a guarded in-place update: the guard is what keeps balances from going negative. */
export function movementWrite(table: string, movement: CreditMovement): TransactWriteItem {
  const amount = { ':a': { N: String(movement.amount) } };
  const update = {
    reserve: {
      UpdateExpression: 'SET available = available - :a, reserved = reserved + :a',
      ConditionExpression: 'available >= :a',
    },
    charge: {
      UpdateExpression: 'SET reserved = reserved - :a, used_total = used_total + :a',
      ConditionExpression: 'reserved >= :a',
    },
    release: {
      UpdateExpression: 'SET reserved = reserved - :a, available = available + :a',
      ConditionExpression: 'reserved >= :a',
    },
  }[movement.kind];
  return {
    Update: {
      TableName: table,
      Key: keys.account(movement.account),
      ExpressionAttributeValues: amount,
      ...update,
    },
  };
}

export function dynamodbJobs(client: DynamoDBClient, table: string, now: () => Date): JobRepository {
  async function write(items: TransactWriteItem[]): Promise<boolean[] | null> {
    try {
      await client.send(new TransactWriteItemsCommand({ TransactItems: items }));
      return null;
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        return (error.CancellationReasons ?? []).map((reason) => reason.Code === 'ConditionalCheckFailed');
      }
      throw error;
    }
  }

  return {
    async get(jobId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.job(jobId), ConsistentRead: true }),
      );
      return doc<Job>(Item);
    },

    async findIdempotent(scope, key) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.idempotency(scope, key), ConsistentRead: true }),
      );
      if (!Item || isExpired(Item, now())) return null;
      return {
        jobId: str(Item, 'job_id')!,
        fingerprint: str(Item, 'fingerprint')!,
      } satisfies IdempotencyRecord;
    },

    async insert(job, reservation, claim: IdempotencyClaim | null) {
      const items: TransactWriteItem[] = [
        { Put: { TableName: table, Item: jobItem(job), ConditionExpression: 'attribute_not_exists(pk)' } },
      ];
      if (reservation) items.push(movementWrite(table, reservation));
      if (claim) {
        items.push({
          Put: {
            TableName: table,
            Item: {
              ...keys.idempotency(claim.scope, claim.key),
              job_id: { S: job.id },
              fingerprint: { S: claim.fingerprint },
              ttl: { N: String(epochSeconds(now()) + IDEMPOTENCY_TTL_SECONDS) },
            },
            // An expired claim may be taken over, as if AWS had already deleted it.
            ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':now': { N: String(epochSeconds(now())) } },
          },
        });
      }
      const failed = await write(items);
      if (!failed) return { inserted: true };
      if (claim && failed[items.length - 1]) {
        const existing = await this.findIdempotent(claim.scope, claim.key);
        if (existing) return { inserted: false, existing };
      }
      if (reservation && failed[1]) {
        throw new InsufficientCreditsError(
          `This operation needs ${reservation.amount} credits; the balance is too low`,
        );
      }
      throw new Error(`Storing job ${job.id} was refused: ${JSON.stringify(failed)}`);
    },

    async update(before, after, movement) {
      const items: TransactWriteItem[] = [
        {
          Put: {
            TableName: table,
            Item: jobItem(after),
            ConditionExpression: 'version = :v',
            ExpressionAttributeValues: { ':v': { N: String(before.version) } },
          },
        },
      ];
      if (movement) items.push(movementWrite(table, movement));
      const failed = await write(items);
      if (!failed) return true;
      if (failed[0]) return false;
      throw new Error(`Credit movement for job ${before.id} was refused: ${JSON.stringify(movement)}`);
    },
  };
}
