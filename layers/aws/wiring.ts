import type { Config } from '#config';
import { config } from '#config';
import type { Caller } from '#core/keys/caller.ts';
import { verifiedKeys } from '#core/keys/verified-keys.ts';
import type { ArchiveTask, Clock } from '#core/ports.ts';
import { openUpload } from '#core/use-cases/uploads.ts';
import { awsClients } from './clients.ts';
import { dynamodbAccounts, dynamodbApiKeys } from './dynamodb-accounts.ts';
import { dynamodbActiveWork } from './dynamodb-active.ts';
import { dynamodbBatches } from './dynamodb-batches.ts';
import { dynamodbDeliveries } from './dynamodb-deliveries.ts';
import { dynamodbAssets, dynamodbFiles } from './dynamodb-files.ts';
import { dynamodbGuests } from './dynamodb-guests.ts';
import { dynamodbJobs } from './dynamodb-jobs.ts';
import { dynamodbUploads } from './dynamodb-uploads.ts';
import { dynamodbWebhookSecrets } from './dynamodb-webhook-secrets.ts';
import { eventbridgeEvents } from './eventbridge-events.ts';
import { masterKeyLoader } from './master-key.ts';
import { s3Objects } from './s3-objects.ts';
import { sfnArchiveWorkflow, sfnWorkflow } from './sfn-workflow.ts';
import { s3Archives, yazlArchives } from './zip-archives.ts';

/**
 * The AWS adapters, grouped by the resource they reach, so that each kind of function builds only what
 * its role allows (functions/wiring/*.ts composes them with the HTTP and vision adapters).
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
    state: (jobId: string, attempt: number) =>
      sfnWorkflow(clients.sfn, required(cfg, 'STATE_MACHINE_ARN')).state(jobId, attempt),
  },
  archiveWorkflow: {
    start: (name: string, task: ArchiveTask) =>
      sfnArchiveWorkflow(clients.sfn, required(cfg, 'ARCHIVE_STATE_MACHINE_ARN')).start(name, task),
  },
});

/** A batch's `upload_id`: a completed archive upload of the caller. */
export const uploadOpener =
  (
    deps: Pick<ReturnType<typeof tableAdapters>, 'uploads'> &
      Pick<ReturnType<typeof bucketAdapters>, 'objects'>,
  ) =>
  async (caller: Caller, uploadId: string, kind: 'archive') => {
    const upload = await openUpload({ ...deps, clock: systemClock }, caller, uploadId, kind);
    return { key: upload.key, bytes: upload.bytes, filename: upload.filename };
  };

export const eventsAdapter = (cfg: Config, clients: Pick<Clients, 'eventbridge'>) => ({
  events: eventbridgeEvents(clients.eventbridge, cfg.EVENT_BUS_NAME),
});

/** What API requests and the operator's CLI need from AWS: table, bucket, workflow and the master key. */
export function dataPlane(cfg: Config = config(), clients: Clients = awsClients(cfg)) {
  const table = tableAdapters(cfg, clients);
  const bucket = bucketAdapters(cfg, clients);
  return {
    config: cfg,
    clock: systemClock,
    ...table,
    ...bucket,
    openUpload: uploadOpener({ uploads: table.uploads, objects: bucket.objects }),
    ...workflowAdapter(cfg, clients),
    masterKey: masterKeyLoader(cfg),
    // One per process (a Lambda container, or `npm start`): reads by a key verified in the last seconds
    // skip reading it again (docs/decisions.md, "Verified keys").
    verifiedKeys: verifiedKeys(),
    policy: {
      allowKeyInQuery: cfg.ALLOW_KEY_IN_QUERY,
      allowKeyInForm: cfg.ALLOW_KEY_IN_FORM,
      guestTrialCredits: cfg.GUEST_TRIAL_CREDITS,
      guestSessionsPerAddressPerDay: cfg.GUEST_SESSIONS_PER_ADDRESS_PER_DAY,
    },
    batchConcurrency: cfg.BATCH_CONCURRENCY,
    /** Whether webhooks and `url` sources may reach loopback (OUTBOUND_ALLOW_LOOPBACK). */
    allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
    maxSourceBytes: cfg.MAX_SOURCE_BYTES,
    maxBodyBytes: cfg.MAX_SOURCE_BYTES,
    maxPhotoBytes: cfg.MAX_PHOTO_BYTES,
    maxArchiveBytes: cfg.MAX_ARCHIVE_BYTES,
  };
}

export type DataPlane = ReturnType<typeof dataPlane>;

let instance: DataPlane | undefined;
/** Lazily built so that importing a module never touches configuration (tests and the local stack set it first). */
export const deps = (): DataPlane => {
  instance ??= dataPlane();
  return instance;
};
