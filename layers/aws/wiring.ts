import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Config } from '#config';
import type {
  ArchiveReader,
  ArchiveTask,
  ArchiveWorkflow,
  ArchiveWriter,
  Clock,
  EventPublisher,
  FollowUpStarter,
  ObjectStore,
  ObjectStreams,
  UploadTargets,
  WorkflowStarter,
} from '#core/ports.ts';
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
import { onFirstCall } from './first-call.ts';

/**
 * The AWS adapters, grouped by the resource they reach, so that each kind of function builds only what
 * its role allows. No policy and no singleton here: functions/wiring/*.ts, one composition root per kind
 * of function, composes them with the use cases' settings and the HTTP and vision adapters.
 */
export const systemClock: Clock = { now: () => new Date() };

/** A setting this function cannot run without: its absence fails the cold start with the variable's name. */
function required<K extends keyof Config>(cfg: Config, name: K): NonNullable<Config[K]> {
  const value = cfg[name];
  if (value === undefined || value === null || value === '')
    throw new Error(`Invalid configuration: ${String(name)} is not set for this function`);
  return value as NonNullable<Config[K]>;
}

/**
 * Every repository kept in the table, imported at cold start, unlike the ports below: an `import()` of
 * table code puts the DynamoDB SDK modules the client also reaches into chunks of their own (esbuild
 * splits by which entries reach a module), and those extra files cost a cold start more than the adapters
 * a function never calls (docs/decisions/0075-table-adapters-stay-imported-at-init.md).
 */
export function tableAdapters(cfg: Config, clients: { dynamodb: DynamoDBClient }) {
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

/**
 * Every port below but the table's is made on its first call: its adapter module, and the SDK package and
 * client behind it, are imported then. A function imports only the wiring of its kind, yet most calls
 * reach a few of its ports (GET /jobs/{id} never starts a workflow, and reads the bucket only to sign a
 * finished job's links), and a package imported at cold start costs every cold start 15-45 ms of CPU
 * (`npm run bench -- coldstart`). A failed import is tried again on the next call (`onFirstCall`).
 */
type AsyncPort<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : never;
};

/** `port`'s methods, each calling the adapter `load` makes (once); `methods` names every one, checked by the compiler. */
export function deferred<T extends AsyncPort<T>>(
  load: () => Promise<T>,
  methods: { [K in keyof T]-?: true },
): T {
  const adapter = onFirstCall(load);
  return Object.fromEntries(
    Object.keys(methods).map((name) => [
      name,
      async (...args: unknown[]) => {
        const port = (await adapter()) as Record<string, (...a: unknown[]) => Promise<unknown>>;
        return port[name]!(...args);
      },
    ]),
  ) as T;
}

type Objects = ObjectStore & ObjectStreams & UploadTargets;

export const bucketAdapters = (cfg: Config) => {
  const bucket = required(cfg, 'BUCKET_NAME');
  const s3 = onFirstCall(async () => {
    const [{ s3Client, s3Objects }, { s3Archives }] = await Promise.all([
      import('./s3-objects.ts'),
      import('./zip-archives.ts'),
    ]);
    const client = s3Client(cfg);
    return { objects: s3Objects(client, bucket), archives: s3Archives(client, bucket) };
  });
  const objects = deferred<Objects>(async () => (await s3()).objects, {
    put: true,
    get: true,
    exists: true,
    delete: true,
    presignGet: true,
    getStream: true,
    putStream: true,
    presignPut: true,
    sizeOf: true,
  });
  const archives = deferred<ArchiveReader>(async () => (await s3()).archives, { open: true });
  const zip: ArchiveWriter = {
    async *zip(entries) {
      yield* (await import('./zip-archives.ts')).zipStream(entries);
    },
  };
  return { objects, archives, zip };
};

/** Starts the job and archive workflows; the ARNs are checked on use, since only some callers start one. */
export const workflowAdapter = (cfg: Config) => {
  const sfn = onFirstCall(async () => {
    const { sfnClient, sfnWorkflow, sfnArchiveWorkflow, sfnFollowUps } = await import('./sfn-workflow.ts');
    return { sfnWorkflow, sfnArchiveWorkflow, sfnFollowUps, client: sfnClient(cfg) };
  });
  const jobs = async () => {
    const { sfnWorkflow, client } = await sfn();
    return sfnWorkflow(client, required(cfg, 'STATE_MACHINE_ARN'));
  };
  const workflow: WorkflowStarter = {
    start: async (jobId, attempt) => (await jobs()).start(jobId, attempt),
  };
  const archiveWorkflow: ArchiveWorkflow = {
    start: async (name: string, task: ArchiveTask) => {
      const { sfnArchiveWorkflow, client } = await sfn();
      return sfnArchiveWorkflow(client, required(cfg, 'ARCHIVE_STATE_MACHINE_ARN')).start(name, task);
    },
  };
  const followUps: FollowUpStarter = {
    deliver: async (jobId, attempt) => {
      const { sfnFollowUps, client } = await sfn();
      return sfnFollowUps(client, required(cfg, 'FOLLOW_UP_STATE_MACHINE_ARN')).deliver(jobId, attempt);
    },
  };
  return { workflow, archiveWorkflow, followUps };
};

export const eventsAdapter = (cfg: Config) => ({
  events: deferred<EventPublisher>(
    async () => {
      const { eventbridgeClient, eventbridgeEvents } = await import('./eventbridge-events.ts');
      return eventbridgeEvents(eventbridgeClient(cfg), cfg.EVENT_BUS_NAME);
    },
    { publish: true },
  ),
});
