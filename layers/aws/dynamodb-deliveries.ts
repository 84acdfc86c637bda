import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { RESULT_TTL_DAYS } from '#core/jobs/expiry.ts';
import type { DeliveryRepository } from '#core/ports.ts';
import type { Delivery, DeliveryAttempt } from '#core/webhooks/delivery.ts';
import { doc, epochSeconds, type Item, num, str } from './dynamodb-items.ts';

/**
 * Layout: a partition per job, `WEBHOOKS#<job id>`, apart from the job's own items, holding
 * - `DELIVERY#<delivery id>`: the delivery (its document, with the body sent) and, updated in place,
 *   `status`, `attempts` (an atomic counter that numbers the attempts) and `updated_at`;
 * - `ATTEMPT#<delivery id>#<attempt, zero-padded>`: one line of the delivery log;
 * - `EVENT#<event id>`: the job event went to the bus.
 * Everything expires with the job's results.
 */
const partition = (jobId: string): AttributeValue => ({ S: `WEBHOOKS#${jobId}` });
const deliveryKey = (jobId: string, deliveryId: string) => ({
  pk: partition(jobId),
  sk: { S: `DELIVERY#${deliveryId}` },
});
const attemptKey = (jobId: string, deliveryId: string, attempt: number) => ({
  pk: partition(jobId),
  sk: { S: `ATTEMPT#${deliveryId}#${String(attempt).padStart(6, '0')}` },
});
const eventKey = (jobId: string, eventId: string) => ({
  pk: partition(jobId),
  sk: { S: `EVENT#${eventId}` },
});

const ttlFrom = (at: string): AttributeValue => ({
  N: String(epochSeconds(new Date(Date.parse(at) + RESULT_TTL_DAYS * 86_400_000))),
});

function deliveryOf(item: Item | undefined): Delivery | null {
  const stored = doc<Delivery>(item);
  if (!stored) return null;
  return {
    ...stored,
    status: (str(item, 'status') as Delivery['status'] | undefined) ?? stored.status,
    attempts: num(item, 'attempts'),
    updatedAt: str(item, 'updated_at') ?? stored.updatedAt,
  };
}

const isConditionFailure = (error: unknown) => error instanceof ConditionalCheckFailedException;

export function dynamodbDeliveries(client: DynamoDBClient, table: string): DeliveryRepository {
  const get = async (jobId: string, deliveryId: string) => {
    const { Item } = await client.send(
      new GetItemCommand({ TableName: table, Key: deliveryKey(jobId, deliveryId), ConsistentRead: true }),
    );
    return deliveryOf(Item);
  };

  return {
    get,
    async open(delivery) {
      try {
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              ...deliveryKey(delivery.jobId, delivery.deliveryId),
              doc: { S: JSON.stringify(delivery) },
              status: { S: delivery.status },
              attempts: { N: String(delivery.attempts) },
              updated_at: { S: delivery.updatedAt },
              ttl: ttlFrom(delivery.createdAt),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return delivery;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const existing = await get(delivery.jobId, delivery.deliveryId);
        if (!existing) throw error;
        return existing;
      }
    },
    async nextAttempt(jobId, deliveryId, at) {
      const { Attributes } = await client.send(
        new UpdateItemCommand({
          TableName: table,
          Key: deliveryKey(jobId, deliveryId),
          UpdateExpression: 'ADD #attempts :one SET updated_at = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#attempts': 'attempts' },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':at': { S: at } },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return num(Attributes, 'attempts');
    },
    async record(attempt: DeliveryAttempt) {
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: {
            ...attemptKey(attempt.jobId, attempt.deliveryId, attempt.attempt),
            doc: { S: JSON.stringify(attempt) },
            ttl: ttlFrom(attempt.at),
          },
        }),
      );
    },
    async finish(jobId, deliveryId, status, at) {
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: deliveryKey(jobId, deliveryId),
            UpdateExpression: 'SET #status = :status, updated_at = :at',
            ConditionExpression: '#status = :pending',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':status': { S: status },
              ':at': { S: at },
              ':pending': { S: 'pending' },
            },
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    },
    async list(jobId) {
      const items: Item[] = [];
      let startKey: Item | undefined;
      do {
        const page = await client.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': partition(jobId) },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        items.push(...(page.Items ?? []));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      const attempts = new Map<string, DeliveryAttempt[]>();
      const deliveries: Delivery[] = [];
      for (const item of items) {
        const sk = str(item, 'sk') ?? '';
        if (sk.startsWith('DELIVERY#')) {
          const delivery = deliveryOf(item);
          if (delivery) deliveries.push(delivery);
        } else if (sk.startsWith('ATTEMPT#')) {
          const attempt = doc<DeliveryAttempt>(item);
          if (attempt)
            attempts.set(attempt.deliveryId, [...(attempts.get(attempt.deliveryId) ?? []), attempt]);
        }
      }
      return deliveries
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
        .map((delivery) => ({
          delivery,
          attempts: (attempts.get(delivery.deliveryId) ?? []).sort((a, b) => a.attempt - b.attempt),
        }));
    },
    async wasPublished(jobId, eventId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: eventKey(jobId, eventId), ConsistentRead: true }),
      );
      return Item !== undefined;
    },
    async markPublished(jobId, eventId, at) {
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: { ...eventKey(jobId, eventId), published_at: { S: at }, ttl: ttlFrom(at) },
        }),
      );
    },
  };
}
