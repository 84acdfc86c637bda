import {
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Asset } from '#core/files/asset-record.ts';
import { assetForgottenAt } from '#core/files/asset-rules.ts';
import type { FileRecord } from '#core/files/files.ts';
import type { AssetRepository, FileRepository } from '#core/ports.ts';
import { TABLE_INDEXES } from '#core/storage-layout.ts';
import { doc, epochSeconds, type Item, isExpired, num, seqSortKey, transactWrite } from './dynamodb-items.ts';

/**
 * Layout. A file is two items with the same document: one in its owner's listing partition of gsi1
 * (`FILES#<owner>`) and one in the global listing (`FILES`) that the master key reads, because an
 * item sits in one index partition only. Both sort by the zero-padded file id.
 */
const INDEX = TABLE_INDEXES.gsi1.name;
const GLOBAL_LISTING = 'FILES';
const ownerListing = (ownerId: string): string => `FILES#${ownerId}`;

const fileKeys = {
  asset: (assetId: string) => ({ pk: { S: `ASSET#${assetId}` }, sk: { S: 'ASSET' } }),
  owned: (fileId: number) => ({ pk: { S: `FILE#${fileId}` }, sk: { S: 'FILE' } }),
  global: (fileId: number) => ({ pk: { S: `FILE#${fileId}` }, sk: { S: 'FILE#ALL' } }),
  /** One per (job, result name): makes registration idempotent, and outlives a deletion so it sticks. */
  resultClaim: (jobId: string, name: string) => ({
    pk: { S: `RESULTFILE#${jobId}#${name}` },
    sk: { S: 'RESULTFILE' },
  }),
  counter: { pk: { S: 'COUNTER#files' }, sk: { S: 'COUNTER' } },
};

const ttlOf = (date: Date | string) => ({ N: String(epochSeconds(new Date(date))) });

function fileItems(file: FileRecord): Item[] {
  const shared = {
    gsi1sk: { S: seqSortKey(file.fileId) },
    ttl: ttlOf(file.expiresAt),
    doc: { S: JSON.stringify(file) },
  };
  return [
    { ...fileKeys.owned(file.fileId), gsi1pk: { S: ownerListing(file.ownerId) }, ...shared },
    { ...fileKeys.global(file.fileId), gsi1pk: { S: GLOBAL_LISTING }, ...shared },
  ];
}

/** null when the transaction went through; otherwise which items failed their condition. */
async function transact(client: DynamoDBClient, items: TransactWriteItem[]): Promise<boolean[] | null> {
  const failed = await transactWrite(client, items);
  return failed ? failed.map((reason) => reason !== false) : null;
}

const put = (table: string, item: Item, mustBeNew: boolean): TransactWriteItem => ({
  Put: {
    TableName: table,
    Item: item,
    ...(mustBeNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
  },
});

export function dynamodbAssets(client: DynamoDBClient, table: string, now: () => Date): AssetRepository {
  return {
    async insert(asset, file) {
      const failed = await transact(client, [
        put(
          table,
          {
            ...fileKeys.asset(asset.id),
            ttl: ttlOf(assetForgottenAt(asset)),
            doc: { S: JSON.stringify(asset) },
          },
          true,
        ),
        ...fileItems(file).map((item) => put(table, item, true)),
      ]);
      if (failed) throw new Error(`Storing asset ${asset.id} was refused: ${JSON.stringify(failed)}`);
    },

    async get(assetId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: fileKeys.asset(assetId), ConsistentRead: true }),
      );
      return isExpired(Item, now()) ? null : doc<Asset>(Item);
    },
  };
}

export function dynamodbFiles(client: DynamoDBClient, table: string, now: () => Date): FileRepository {
  return {
    async nextId() {
      const { Attributes } = await client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: fileKeys.counter,
          UpdateExpression: 'ADD last_id :one',
          ExpressionAttributeValues: { ':one': { N: '1' } },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return num(Attributes, 'last_id');
    },

    async insertResult(file) {
      const claim = {
        ...fileKeys.resultClaim(file.jobId ?? '', file.name),
        file_id: { N: String(file.fileId) },
        ttl: ttlOf(file.expiresAt),
      };
      const failed = await transact(client, [
        put(table, claim, true),
        ...fileItems(file).map((item) => put(table, item, true)),
      ]);
      if (!failed) return true;
      if (failed[0]) return false;
      throw new Error(`Storing file ${file.fileId} was refused: ${JSON.stringify(failed)}`);
    },

    async get(fileId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: fileKeys.owned(fileId), ConsistentRead: true }),
      );
      return isExpired(Item, now()) ? null : doc<FileRecord>(Item);
    },

    async resultState(jobId, name) {
      const { Item } = await client.send(
        new GetItemCommand({
          TableName: table,
          Key: fileKeys.resultClaim(jobId, name),
          ConsistentRead: true,
        }),
      );
      if (!Item) return null;
      return (await this.get(num(Item, 'file_id'))) ? 'listed' : 'deleted';
    },

    async list(ownerId, before, limit) {
      const files: FileRecord[] = [];
      let start: Item | undefined;
      // The filter drops items past their ttl that AWS has not deleted yet; it runs after `Limit`,
      // so a page can come back short and the query goes on until it is full or the index ends.
      do {
        const page = await client.send(
          new QueryCommand({
            TableName: table,
            IndexName: INDEX,
            KeyConditionExpression: before === null ? 'gsi1pk = :p' : 'gsi1pk = :p AND gsi1sk < :before',
            FilterExpression: '#ttl > :now',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':p': { S: ownerId === null ? GLOBAL_LISTING : ownerListing(ownerId) },
              ':now': { N: String(epochSeconds(now())) },
              ...(before === null ? {} : { ':before': { S: seqSortKey(before) } }),
            },
            ScanIndexForward: false,
            Limit: limit - files.length,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) files.push(doc<FileRecord>(item)!);
        start = page.LastEvaluatedKey;
      } while (start && files.length < limit);
      return files;
    },

    async delete(file) {
      const items: TransactWriteItem[] = [
        {
          Delete: {
            TableName: table,
            Key: fileKeys.owned(file.fileId),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        { Delete: { TableName: table, Key: fileKeys.global(file.fileId) } },
      ];
      if (file.assetId) items.push({ Delete: { TableName: table, Key: fileKeys.asset(file.assetId) } });
      const failed = await transact(client, items);
      if (!failed) return true;
      if (failed[0]) return false;
      throw new Error(`Deleting file ${file.fileId} was refused: ${JSON.stringify(failed)}`);
    },
  };
}
