import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Config } from '#config';
import { clientSettings } from './client-settings.ts';

/** Every function but inference reads the table, so its client is the one made at cold start. */
export const dynamodbClient = (cfg: Config) => new DynamoDBClient(clientSettings(cfg, cfg.DYNAMODB_ENDPOINT));
