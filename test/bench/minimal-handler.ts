/**
 * The yardstick of `npm run bench -- coldstart`: what any API function of this shape must load (the
 * DynamoDB client, middy and zod), one read and nothing of ours, bundled as every zip function is.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import * as z from 'zod';

const client = new DynamoDBClient({});
const path = z.object({ job_id: z.string().min(1) });

export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2>().handler(async (event) => {
  const { job_id } = path.parse(event.pathParameters);
  const { Item } = await client.send(
    new GetItemCommand({ TableName: process.env.TABLE_NAME, Key: { pk: { S: job_id }, sk: { S: 'job' } } }),
  );
  return { statusCode: Item ? 200 : 404, body: JSON.stringify({ result: Boolean(Item) }) };
});
