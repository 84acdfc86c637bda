import { config } from '#config';
import type { Caller } from '#core/keys/caller.ts';
import type { ArchiveTask, Clock } from '#core/ports.ts';
import { openUpload } from '#core/use-cases/uploads.ts';
import { fetchOutbound } from '#http/outbound.ts';
import { httpWebhookSender } from '#http/webhook-sender.ts';
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
import { s3Objects } from './s3-objects.ts';
import { sfnArchiveWorkflow, sfnWorkflow } from './sfn-workflow.ts';
import { s3Archives, yazlArchives } from './zip-archives.ts';

const systemClock: Clock = { now: () => new Date() };

/** Everything a function needs, built once per cold start from configuration. */
export function wiring() {
  const cfg = config();
  const clients = awsClients(cfg);
  const keys = dynamodbApiKeys(clients.dynamodb, cfg.TABLE_NAME);
  const accounts = dynamodbAccounts(clients.dynamodb, cfg.TABLE_NAME);
  const uploads = dynamodbUploads(clients.dynamodb, cfg.TABLE_NAME);
  const objects = s3Objects(clients.s3, cfg.BUCKET_NAME);
  return {
    config: cfg,
    clock: systemClock,
    jobs: dynamodbJobs(clients.dynamodb, cfg.TABLE_NAME, () => systemClock.now(), cfg.MAX_JOBS_IN_FLIGHT),
    accounts,
    keys,
    guests: dynamodbGuests(clients.dynamodb, cfg.TABLE_NAME),
    masterKeySha256: cfg.MASTER_KEY_SHA256 ?? null,
    policy: {
      allowKeyInQuery: cfg.ALLOW_KEY_IN_QUERY,
      allowKeyInForm: cfg.ALLOW_KEY_IN_FORM,
      guestTrialCredits: cfg.GUEST_TRIAL_CREDITS,
      guestSessionsPerAddressPerDay: cfg.GUEST_SESSIONS_PER_ADDRESS_PER_DAY,
    },
    objects,
    assets: dynamodbAssets(clients.dynamodb, cfg.TABLE_NAME, () => systemClock.now()),
    files: dynamodbFiles(clients.dynamodb, cfg.TABLE_NAME, () => systemClock.now()),
    batches: dynamodbBatches(
      clients.dynamodb,
      cfg.TABLE_NAME,
      () => systemClock.now(),
      cfg.MAX_JOBS_IN_FLIGHT,
    ),
    batchConcurrency: cfg.BATCH_CONCURRENCY,
    archives: s3Archives(clients.s3, cfg.BUCKET_NAME),
    zip: yazlArchives,
    archiveWorkflow: {
      start: (name: string, task: ArchiveTask) => {
        if (!cfg.ARCHIVE_STATE_MACHINE_ARN) throw new Error('ARCHIVE_STATE_MACHINE_ARN is not configured');
        return sfnArchiveWorkflow(clients.sfn, cfg.ARCHIVE_STATE_MACHINE_ARN).start(name, task);
      },
    },
    uploads,
    /** A batch's `upload_id`: a completed archive upload of the caller. */
    openUpload: async (caller: Caller, uploadId: string, kind: 'archive') => {
      const upload = await openUpload({ uploads, objects, clock: systemClock }, caller, uploadId, kind);
      return { key: upload.key, bytes: upload.bytes, filename: upload.filename };
    },
    maxPhotoBytes: cfg.MAX_PHOTO_BYTES,
    maxArchiveBytes: cfg.MAX_ARCHIVE_BYTES,
    workflow: {
      start: (jobId: string, attempt: number) => {
        if (!cfg.STATE_MACHINE_ARN) throw new Error('STATE_MACHINE_ARN is not configured');
        return sfnWorkflow(clients.sfn, cfg.STATE_MACHINE_ARN).start(jobId, attempt);
      },
      state: (jobId: string, attempt: number) => {
        if (!cfg.STATE_MACHINE_ARN) throw new Error('STATE_MACHINE_ARN is not configured');
        return sfnWorkflow(clients.sfn, cfg.STATE_MACHINE_ARN).state(jobId, attempt);
      },
    },
    active: dynamodbActiveWork(clients.dynamodb, cfg.TABLE_NAME),
    fetchSource: async (url: string) => {
      const fetched = await fetchOutbound(url, {
        allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
        timeoutMs: cfg.OUTBOUND_TIMEOUT_MS,
        maxBytes: cfg.MAX_SOURCE_BYTES,
      });
      const name = new URL(fetched.finalUrl).pathname.split('/').pop() || null;
      return { bytes: fetched.bytes, filename: name, contentType: fetched.contentType };
    },
    webhookSecrets: dynamodbWebhookSecrets(clients.dynamodb, cfg.TABLE_NAME),
    deliveries: dynamodbDeliveries(clients.dynamodb, cfg.TABLE_NAME),
    webhooks: httpWebhookSender({
      allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
      timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    }),
    events: eventbridgeEvents(clients.eventbridge, cfg.EVENT_BUS_NAME),
    maxSourceBytes: cfg.MAX_SOURCE_BYTES,
    maxBodyBytes: cfg.MAX_SOURCE_BYTES,
  };
}

export type Wiring = ReturnType<typeof wiring>;

let instance: Wiring | undefined;
/** Lazily built so that importing a handler never touches configuration (tests and the local stack set it first). */
export const deps = (): Wiring => {
  instance ??= wiring();
  return instance;
};
