import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { UploadRepository } from '#core/ports.ts';
import { UPLOAD_REMEMBERED_DAYS, type Upload } from '#core/uploads/upload.ts';
import { doc, epochSeconds, keys } from './dynamodb-items.ts';

const DAY_MS = 24 * 3600 * 1000;

/** One record per upload (`UPLOAD#<id>`/`UPLOAD`), forgotten by TTL a week after it expires. */
export function dynamodbUploads(client: DynamoDBClient, table: string): UploadRepository {
  return {
    async insert(upload) {
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: {
            ...keys.upload(upload.id),
            doc: { S: JSON.stringify(upload) },
            ttl: {
              N: String(
                epochSeconds(new Date(Date.parse(upload.expiresAt) + UPLOAD_REMEMBERED_DAYS * DAY_MS)),
              ),
            },
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    },
    async get(uploadId) {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: table, Key: keys.upload(uploadId), ConsistentRead: true }),
      );
      return doc<Upload>(Item);
    },
  };
}
