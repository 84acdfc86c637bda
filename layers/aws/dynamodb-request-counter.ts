import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { RequestCounter } from '#core/ports.ts';

/**
 * One item per client and window, counted by a conditional ADD: one write per request, no read, and a
 * refused request writes nothing. The table's TTL drops old windows.
 */
export function dynamodbRequestCounter(client: DynamoDBClient, table: string): RequestCounter {
  return {
    async admit(clientId, window) {
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: `RATE#${clientId}#${window.start}` }, sk: { S: 'RATE' } },
            UpdateExpression: 'ADD requests :one SET #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(requests) OR requests < :max',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':one': { N: '1' },
              ':max': { N: String(window.max) },
              ':ttl': { N: String(window.expiresAt) },
            },
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
