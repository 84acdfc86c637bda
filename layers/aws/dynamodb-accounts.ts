import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { CreditAccount } from '#core/credits/credits.ts';
import type { ApiKeyRecord, KeyDefaults } from '#core/keys/api-key.ts';
import type { AccountRepository, ApiKeyRepository } from '#core/ports.ts';
import { doc, keys, num } from './dynamodb-items.ts';

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
      try {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              ...keys.account(account),
              available: { N: String(credits) },
              reserved: { N: '0' },
              used_total: { N: '0' },
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw error;
      }
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
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: table,
                Item: { ...keys.apiKey(record.keyId), doc: { S: JSON.stringify(record) } },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: table,
                Item: {
                  ...keys.account(record.keyId),
                  available: { N: String(credits) },
                  reserved: { N: '0' },
                  used_total: { N: '0' },
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
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
