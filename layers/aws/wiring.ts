import type { Config } from '#config';
import type { ArchiveTask, Clock } from '#core/ports.ts';
import type { awsClients } from './clients.ts';
import { dynamodbAccounts, dynamodbApiKeys } from './dynamodb-accounts.ts';
import { dynamodbActiveWork } from './dynamodb-active.ts';
import { dynamodbBatches } from './dynamodb-batches.ts';
import { dynamodbDeliveries } from './dynamodb-deliveries.ts';
import { dynamodbAssets, dynamodbFiles } from './dynamodb-files.ts';
import { dynamodbGuests } from './dynamodb-guests.ts';
import { dynamodbJobs } from './dynamodb-jobs.ts';
import { dynamodbRequestCounter } from './dynamodb-request-counter.ts';
import { dynamodbUploads } from './dynamodb-uploads.ts';
import { dynamodbWebhookSecrets } from './dynamodb-webhook-secrets.ts';
import { eventbridgeEvents } from './eventbridge-events.ts';
import { s3Objects } from './s3-objects.ts';
import { sfnArchiveWorkflow, sfnWorkflow } from './sfn-workflow.ts';
import { s3Archives, yazlArchives } from './zip-archives.ts';

/**
 * The AWS adapters, grouped by the resource they reach, so that each kind of function builds only what
 * its role allows. No policy and no singleton here: functions/wiring/*.ts, one composition root per kind
 * of function, composes them with the use cases' settings and the HTTP and vision adapters.
 */
export const systemClock: Clock = { now: () => new Date() };

type Clients = ReturnType<typeof awsClients>;

/** A setting this function cannot run without: its absence fails the cold start with the variable's name. */
export function required<K extends keyof Config>(cfg: Config, name: K): NonNullable<Config[K]> {
  const value = cfg[name];
  if (value === undefined || value === null || value === '')
    throw new Error(`Invalid configuration: ${String(name)} is not set for this function`);
  return value as NonNullable<Config[K]>;
}

/** Every repository kept in the table. */
export function tableAdapters(cfg: Config, clients: Pick<Clients, 'dynamodb'>) {
  const table = required(cfg, 'TABLE_NAME');
  const now = () => systemClock.now();
  return {
    jobs: dynamodbJobs(clients.dynamodb, table, now, cfg.MAX_JOBS_IN_FLIGHT),
    accounts: dynamodbAccounts(clients.dynamodb, table),
    keys: dynamodbApiKeys(clients.dynamodb, table),
    guests: dynamodbGuests(clients.dynamodb, table),
    requests: dynamodbRequestCounter(clients.dynamodb, table),
    assets: dynamodbAssets(clients.dynamodb, table, now),
    files: dynamodbFiles(clients.dynamodb, table, now),
    batches: dynamodbBatches(clients.dynamodb, table, now, cfg.MAX_JOBS_IN_FLIGHT),
    webhookSecrets: dynamodbWebhookSecrets(clients.dynamodb, table),
    deliveries: dynamodbDeliveries(clients.dynamodb, table),
    uploads: dynamodbUploads(clients.dynamodb, table),
    active: dynamodbActiveWork(clients.dynamodb, table),
  };
}

export const bucketAdapters = (cfg: Config, clients: Pick<Clients, 's3'>) => ({
  objects: s3Objects(clients.s3, required(cfg, 'BUCKET_NAME')),
  archives: s3Archives(clients.s3, required(cfg, 'BUCKET_NAME')),
  zip: yazlArchives,
});

/** Starts the job and archive workflows; the ARNs are checked on use, since only some callers start one. */
export const workflowAdapter = (cfg: Config, clients: Pick<Clients, 'sfn'>) => ({
  workflow: {
    start: (jobId: string, attempt: number) =>
      sfnWorkflow(clients.sfn, required(cfg, 'STATE_MACHINE_ARN')).start(jobId, attempt),
  },
  archiveWorkflow: {
    start: (name: string, task: ArchiveTask) =>
      sfnArchiveWorkflow(clients.sfn, required(cfg, 'ARCHIVE_STATE_MACHINE_ARN')).start(name, task),
  },
});

export const eventsAdapter = (cfg: Config, clients: Pick<Clients, 'eventbridge'>) => ({
  events: eventbridgeEvents(clients.eventbridge, cfg.EVENT_BUS_NAME),
});
