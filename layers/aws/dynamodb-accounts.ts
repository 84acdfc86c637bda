import {
  type AttributeValue,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { CreditAccount } from '#core/credits/credits.ts';
import type { LedgerEntry } from '#core/credits/ledger.ts';
import type { ApiKeyRecord, KeyDefaults } from '#core/keys/api-key.ts';
import type { AccountRepository, ApiKeyRepository } from '#core/ports.ts';
import { doc, keys, num, transactWrite } from './dynamodb-items.ts';
import { ledgerEntryOf, ledgerPartition, openAccountWrites } from './dynamodb-ledger.ts';

export function dynamodbAccounts(client: DynamoDBClient, table: string): AccountRepository {
  return {
    async get(account) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.account(account), ConsistentRead: true }),
      );
      if (!Item) return null;
      return {
        available: num(Item, 'available'),
        reserved: num(Item, 'reserved'),
        usedTotal: num(Item, 'used_total'),
      } satisfies CreditAccount;
    },
    async open(account, credits) {
      const failed = await transactWrite(
        client,
        openAccountWrites(table, account, credits, new Date().toISOString()),
      );
      return failed === null;
    },
    async ledger(account) {
      const entries: LedgerEntry[] = [];
      let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
      do {
        const page = await client.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': { S: ledgerPartition(account) } },
            ConsistentRead: true,
            ExclusiveStartKey,
          }),
        );
        entries.push(...(page.Items ?? []).map(ledgerEntryOf));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return entries;
    },
  };
}

export function dynamodbApiKeys(client: DynamoDBClient, table: string): ApiKeyRepository {
  return {
    async findById(keyId) {
      const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: keys.apiKey(keyId) }));
      return doc<ApiKeyRecord>(Item);
    },
    async create(record, credits) {
      // Key and account appear together or not at all.
      const failed = await transactWrite(client, [
        {
          Put: {
            TableName: table,
            Item: { ...keys.apiKey(record.keyId), doc: { S: JSON.stringify(record) } },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...openAccountWrites(table, record.keyId, credits, record.createdAt),
      ]);
      if (failed) throw new Error(`API key ${record.keyId} or its account exists already`);
    },
    async updateDefaults(keyId, defaults: KeyDefaults) {
      const existing = await this.findById(keyId);
      if (!existing) throw new Error(`API key ${keyId} does not exist`);
      await client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: keys.apiKey(keyId),
          UpdateExpression: 'SET doc = :doc',
          ExpressionAttributeValues: { ':doc': { S: JSON.stringify({ ...existing, defaults }) } },
        }),
      );
    },
  };
}
