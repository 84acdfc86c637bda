import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { WebhookSecretRepository } from '#core/ports.ts';
import type { WebhookSecret } from '#core/webhooks/signature.ts';
import { doc, num } from './dynamodb-items.ts';

/**
 * One item per API key, in a partition of its own (`WEBHOOKSECRETS#<key id>`) so that it never meets the
 * key's record or its account in a write; `version` makes a rotation a compare-and-set.
 */
const secretKey = (keyId: string) => ({ pk: { S: `WEBHOOKSECRETS#${keyId}` }, sk: { S: 'WEBHOOKSECRETS' } });

export function dynamodbWebhookSecrets(client: DynamoDBClient, table: string): WebhookSecretRepository {
  return {
    async get(keyId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: secretKey(keyId), ConsistentRead: true }),
      );
      return {
        secrets: doc<{ secrets: WebhookSecret[] }>(Item)?.secrets ?? [],
        version: num(Item, 'version'),
      };
    },
    async replace(keyId, secrets, version) {
      try {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              ...secretKey(keyId),
              doc: { S: JSON.stringify({ secrets }) },
              version: { N: String(version + 1) },
            },
            ...(version === 0
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : {
                  ConditionExpression: 'version = :version',
                  ExpressionAttributeValues: { ':version': { N: String(version) } },
                }),
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
