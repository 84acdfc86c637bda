import { setTimeout as sleep } from 'node:timers/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  type PutItemCommandInput,
  TransactionCanceledException,
  TransactionConflictException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { type BackoffPolicy, backoffDelayMs, TRANSACTION_CONFLICT_BACKOFF } from '#core/backoff.ts';
import { TransientError } from '#core/errors.ts';
import { sweeperWatches } from '#core/jobs/job.ts';
import { TABLE_INDEXES } from '#core/storage-layout.ts';

/** Single-table key layout. Documents are stored as JSON next to the few attributes that are indexed or updated in place. */
export const keys = {
  job: (jobId: string) => ({ pk: { S: `JOB#${jobId}` }, sk: { S: 'JOB' } }),
  account: (account: string) => ({ pk: { S: `ACCOUNT#${account}` }, sk: { S: 'ACCOUNT' } }),
  apiKey: (keyId: string) => ({ pk: { S: `KEY#${keyId}` }, sk: { S: 'KEY' } }),
  batch: (batchId: string) => ({ pk: { S: `BATCH#${batchId}` }, sk: { S: 'BATCH' } }),
  /** Items share the batch's partition, so one query reads them all in index order. */
  batchItem: (batchId: string, index: number) => ({
    pk: { S: `BATCH#${batchId}` },
    sk: { S: `ITEM#${index.toString().padStart(6, '0')}` },
  }),
  upload: (uploadId: string) => ({ pk: { S: `UPLOAD#${uploadId}` }, sk: { S: 'UPLOAD' } }),
  idempotency: (scope: string, key: string) => ({
    pk: { S: `IDEMPOTENCY#${scope}#${key}` },
    sk: { S: 'IDEMPOTENCY' },
  }),
};

export const ownerPartition = (ownerId: string): string => `OWNER#${ownerId}`;
/** Zero-padded so that the string order of the GSI sort key is the numeric order of `seq`. */
export const seqSortKey = (seq: number): string => seq.toString().padStart(20, '0');

export type Item = Record<string, AttributeValue>;

export type ActiveKind = 'JOB' | 'BATCH';

/** Whether a job or a batch is watched by the sweeper, and so listed in the sparse `active` index. */
export function isActive(kind: ActiveKind, record: { status: string; followUpDue?: number }): boolean {
  if (kind === 'JOB') return sweeperWatches(record);
  return record.status === 'unpacking' || record.status === 'processing';
}

/** The shard of the `active` index a record lives in: a stable hash of its id. */
export function activeShard(id: string): number {
  let hash = 0;
  for (let i = 0; i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) >>> 0;
  return hash % TABLE_INDEXES.active.shards;
}

export const activePartition = (kind: ActiveKind, shard: number): string => `ACTIVE#${kind}#${shard}`;

/**
 * The keys of the sparse `active` index for a record written whole: present while the job or batch is
 * unfinished, absent once it ends (the Put without them drops it from the index).
 */
export function activeWorkKeys(
  kind: ActiveKind,
  record: { id: string; status: string; createdAt: string; followUpDue?: number },
): Item {
  if (!isActive(kind, record)) return {};
  const { partitionKey, sortKey } = TABLE_INDEXES.active;
  return {
    [partitionKey]: { S: activePartition(kind, activeShard(record.id)) },
    [sortKey]: { S: `${record.createdAt}#${record.id}` },
  };
}

export const num = (item: Item | undefined, name: string): number => Number(item?.[name]?.N ?? '0');
export const str = (item: Item | undefined, name: string): string | undefined => item?.[name]?.S;

/** The document of an item: packed (`packedDoc`) or plain JSON, as items written before packing hold it. */
export function doc<T>(item: Item | undefined): T | null {
  const packed = item?.docz?.B;
  if (packed) return JSON.parse(inflateRawSync(packed).toString('utf8')) as T;
  const raw = item?.doc?.S;
  return raw ? (JSON.parse(raw) as T) : null;
}

/**
 * A document deflated into a binary attribute. DynamoDB bills a write by the item's size in whole KB, on
 * the table and again on each index that projects it: a job's JSON (0.9 to 1.5 KB) took every job write to
 * 2 KB, deflated (about half) it stays under 1 KB. For the items written on every job's path.
 */
export const packedDoc = (value: unknown): Item => ({
  docz: { B: deflateRawSync(JSON.stringify(value), { level: 9 }) },
});

export const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** AWS deletes expired items late (up to days); an item past its `ttl` is treated as absent. */
export function isExpired(item: Item | undefined, now: Date): boolean {
  const ttl = item?.ttl?.N;
  return ttl !== undefined && Number(ttl) <= epochSeconds(now);
}

/** Cancellation reasons that say nothing about the items' conditions: the same request may go through later. */
const TRANSIENT_REASONS = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);

/**
 * Write `items` all or nothing. null when written; else, per item, its old image when its own condition
 * failed (with ReturnValuesOnConditionCheckFailure ALL_OLD) and false when it did not.
 *
 * A transaction cancelled because another one held one of its items (`TransactionConflict`; the
 * account item is in every reserve, charge and release) is tried again with jittered backoff; when the
 * tries run out it is a TransientError, which the workflow retries and the API answers with 503. A failed
 * condition on a try is that try's answer: conditions are evaluated afresh on every try.
 */
export async function transactWrite(
  client: DynamoDBClient,
  items: TransactWriteItem[],
  policy: BackoffPolicy = TRANSACTION_CONFLICT_BACKOFF,
): Promise<Array<Item | false> | null> {
  const exhausted = (tries: number) =>
    `A transaction of ${items.length} items was cancelled by conflicting writes ${tries} times`;
  return triedAgainOnConflict(policy, exhausted, async () => {
    try {
      await client.send(new TransactWriteItemsCommand({ TransactItems: items }));
      return null;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failedConditions = reasons.some((reason) => reason.Code === 'ConditionalCheckFailed');
      if (failedConditions || !reasons.some((reason) => TRANSIENT_REASONS.has(reason.Code ?? ''))) {
        return reasons.map((reason) =>
          reason.Code === 'ConditionalCheckFailed' ? (reason.Item ?? {}) : false,
        );
      }
      return new Conflicted(error);
    }
  });
}

/**
 * One conditional put outside a transaction: true when written, false when its condition failed. A put
 * on an item a transaction holds is refused with `TransactionConflictException`; it is tried again as a
 * cancelled transaction is (`transactWrite`).
 */
export async function conditionalPut(
  client: DynamoDBClient,
  input: PutItemCommandInput,
  policy: BackoffPolicy = TRANSACTION_CONFLICT_BACKOFF,
): Promise<boolean> {
  const exhausted = (tries: number) => `A put was refused by a transaction on its item ${tries} times`;
  return triedAgainOnConflict(policy, exhausted, async () => {
    try {
      await client.send(new PutItemCommand(input));
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      if (!(error instanceof TransactionConflictException)) throw error;
      return new Conflicted(error);
    }
  });
}

/** A try that lost to another write on one of its items: the same request may go through later. */
class Conflicted {
  constructor(readonly error: unknown) {}
}

/**
 * `attempt` until it answers, tried again with jittered backoff while it loses to a conflicting write; when
 * the tries run out it is a TransientError (the workflow retries it, the API answers 503).
 */
async function triedAgainOnConflict<T>(
  policy: BackoffPolicy,
  exhausted: (tries: number) => string,
  attempt: () => Promise<T | Conflicted>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    const outcome = await attempt();
    if (!(outcome instanceof Conflicted)) return outcome;
    if (tries >= policy.attempts) throw new TransientError(exhausted(tries), { cause: outcome.error });
    await sleep(backoffDelayMs(policy, tries, Math.random));
  }
}
