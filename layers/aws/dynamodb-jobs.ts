import {
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandInput,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { reservationRefusal } from '#core/credits/credits.ts';
import { IDEMPOTENCY_TTL_SECONDS, type IdempotencyRecord } from '#core/idempotency/idempotency.ts';
import type { Job } from '#core/jobs/job.ts';
import type { CreditMovement, IdempotencyClaim, JobRepository } from '#core/ports.ts';
import { TABLE_INDEXES } from '#core/storage-layout.ts';
import {
  activeWorkKeys,
  conditionalPut,
  doc,
  epochSeconds,
  type Item,
  isExpired,
  keys,
  num,
  ownerPartition,
  packedDoc,
  seqSortKey,
  str,
  transactWrite,
} from './dynamodb-items.ts';
import { ledgerWrite } from './dynamodb-ledger.ts';

export function jobItem(job: Job): Item {
  return {
    ...keys.job(job.id),
    gsi1pk: { S: ownerPartition(job.ownerId) },
    gsi1sk: { S: seqSortKey(job.seq) },
    ...activeWorkKeys('JOB', job),
    status: { S: job.status },
    version: { N: String(job.version) },
    ...packedDoc(job),
  };
}

/**
 * One credit movement as a guarded in-place update: the guards are what keep balances from going
 * negative. `in_flight` counts the account's open reservations, which caps concurrent jobs (429).
 */
function movementWrite(table: string, movement: CreditMovement, maxInFlight: number): TransactWriteItem {
  // DynamoDB refuses placeholders an expression does not use, so each update names exactly its own.
  const values = { ':a': { N: String(movement.amount) }, ':one': { N: '1' } };
  const update = {
    reserve: {
      UpdateExpression:
        'SET available = available - :a, reserved = reserved + :a, in_flight = if_not_exists(in_flight, :zero) + :one',
      ConditionExpression: 'available >= :a AND (attribute_not_exists(in_flight) OR in_flight < :max)',
      ExpressionAttributeValues: { ...values, ':zero': { N: '0' }, ':max': { N: String(maxInFlight) } },
    },
    charge: {
      UpdateExpression:
        'SET reserved = reserved - :a, used_total = used_total + :a, in_flight = if_not_exists(in_flight, :one) - :one',
      ConditionExpression: 'reserved >= :a',
      ExpressionAttributeValues: values,
    },
    release: {
      UpdateExpression:
        'SET reserved = reserved - :a, available = available + :a, in_flight = if_not_exists(in_flight, :one) - :one',
      ConditionExpression: 'reserved >= :a',
      ExpressionAttributeValues: values,
    },
  }[movement.kind];
  return {
    Update: {
      TableName: table,
      Key: keys.account(movement.account),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      ...update,
    },
  };
}

/** The balance change and its ledger entry, always written together. */
export function movementWrites(
  table: string,
  movement: CreditMovement,
  maxInFlight: number,
  at: string,
): TransactWriteItem[] {
  return [
    movementWrite(table, movement, maxInFlight),
    ledgerWrite(
      table,
      movement.account,
      { kind: movement.kind, amount: movement.amount, jobId: movement.jobId, at },
      `${movement.jobId}#v${movement.jobVersion}`,
    ),
  ];
}

export function dynamodbJobs(
  client: DynamoDBClient,
  table: string,
  now: () => Date,
  maxInFlight: number,
): JobRepository {
  const write = (items: TransactWriteItem[]) => transactWrite(client, items);

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
      if (reservation) items.push(...movementWrites(table, reservation, maxInFlight, now().toISOString()));
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
      if (reservation && failed[1]) reservationRefused(reservation, failed[1], maxInFlight);
      throw new Error(`Storing job ${job.id} was refused: ${JSON.stringify(failed)}`);
    },

    async update(before, after, movement) {
      const put = {
        TableName: table,
        Item: jobItem(after),
        ConditionExpression: 'version = :v',
        ExpressionAttributeValues: { ':v': { N: String(before.version) } },
      };
      // Alone, the version's condition is all the write needs: a plain put costs half a transaction's units.
      if (!movement) return conditionalPut(client, put);
      const items: TransactWriteItem[] = [
        { Put: put },
        ...movementWrites(table, movement, maxInFlight, now().toISOString()),
      ];
      const failed = await write(items);
      if (!failed) return true;
      if (failed[0]) return false;
      if (movement?.kind === 'reserve' && failed[1]) reservationRefused(movement, failed[1], maxInFlight);
      throw new Error(`Credit movement for job ${before.id} was refused: ${JSON.stringify(movement)}`);
    },

    async listByOwner(ownerId, page) {
      const jobs: Job[] = [];
      const input: QueryCommandInput = {
        TableName: table,
        IndexName: TABLE_INDEXES.gsi1.name,
        KeyConditionExpression: page.before ? 'gsi1pk = :owner AND gsi1sk < :before' : 'gsi1pk = :owner',
        ExpressionAttributeValues: {
          ':owner': { S: ownerPartition(ownerId) },
          ...(page.before ? { ':before': { S: seqSortKey(page.before) } } : {}),
          ...(page.status ? { ':status': { S: page.status } } : {}),
        },
        ...(page.status
          ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } }
          : {}),
        ScanIndexForward: false,
      };
      // One more than asked tells whether another page exists; a filter may need several reads to fill a page.
      do {
        const result = await client.send(new QueryCommand({ ...input, Limit: page.limit + 1 - jobs.length }));
        for (const item of result.Items ?? []) jobs.push(doc<Job>(item)!);
        input.ExclusiveStartKey = result.LastEvaluatedKey;
      } while (input.ExclusiveStartKey && jobs.length <= page.limit);
      const more = jobs.length > page.limit;
      const pageJobs = jobs.slice(0, page.limit);
      return { jobs: pageJobs, nextCursor: more ? pageJobs[pageJobs.length - 1]!.seq : null };
    },
  };
}

/** Tell "not enough credits" (402) from "too many jobs at once" (429) by the account as it was. */
export function reservationRefused(reservation: CreditMovement, account: Item, maxInFlight: number): never {
  const refusal = reservationRefusal(
    { available: num(account, 'available'), inFlight: num(account, 'in_flight') },
    reservation.amount,
    maxInFlight,
  );
  throw refusal ?? new Error(`The reservation for job ${reservation.jobId} was refused by neither guard`);
}
