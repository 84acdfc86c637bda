import { randomBytes } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { GuestRepository } from '#core/ports.ts';
import { str } from './dynamodb-items.ts';

const SECRET_KEY = { pk: { S: 'CONFIG#guest-signing-secret' }, sk: { S: 'CONFIG' } };

export function dynamodbGuests(client: DynamoDBClient, table: string): GuestRepository {
  let secret: Promise<string> | undefined;

  async function loadOrCreateSecret(): Promise<string> {
    const read = async () =>
      str(
        (await client.send(new GetItemCommand({ TableName: table, Key: SECRET_KEY, ConsistentRead: true })))
          .Item,
        'value',
      );
    const existing = await read();
    if (existing) return existing;
    try {
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: { ...SECRET_KEY, value: { S: randomBytes(32).toString('base64url') } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      // Another function created it first; theirs is the one everybody uses.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    return (await read())!;
  }

  return {
    signingSecret() {
      secret ??= loadOrCreateSecret();
      secret.catch(() => {
        secret = undefined;
      });
      return secret;
    },
    async admitNewSession(address, day, max) {
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: `GUESTS#${address}#${day}` }, sk: { S: 'GUESTS' } },
            UpdateExpression: 'ADD sessions :one SET #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(sessions) OR sessions < :max',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: {
              ':one': { N: '1' },
              ':max': { N: String(max) },
              ':ttl': { N: String(Math.floor(Date.now() / 1000) + 2 * 24 * 3600) },
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
