import { dynamodbClient } from '#aws/clients.ts';
import { masterKeyLoader } from '#aws/master-key.ts';
import { logger } from '#aws/observability.ts';
import { bucketAdapters, deferred, systemClock, tableAdapters, workflowAdapter } from '#aws/wiring.ts';
import { type Config, config, oncePerConfig } from '#config';
import type { Caller } from '#core/keys/caller.ts';
import { verifiedKeys } from '#core/keys/verified-keys.ts';
import type { WebhookSender } from '#core/ports.ts';
import { openUpload } from '#core/use-cases/open-upload.ts';

/**
 * The API functions' composition root, also what the operator's CLI and `npm start` use: the table, the
 * bucket, the workflows and the master key (layers/aws/wiring.ts), the settings the use cases read, the
 * outbound HTTP clients for `url` sources and redeliveries, and the function's logger. Their role grants
 * exactly this.
 */
function apiWiring(cfg: Config = config()) {
  const table = tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) });
  const bucket = bucketAdapters(cfg);
  return {
    config: cfg,
    clock: systemClock,
    ...table,
    ...bucket,
    /** A batch's `upload_id`: a completed archive upload of the caller. */
    openUpload: async (caller: Caller, uploadId: string, kind: 'archive') => {
      const upload = await openUpload(
        { uploads: table.uploads, objects: bucket.objects, clock: systemClock },
        caller,
        uploadId,
        kind,
      );
      return { key: upload.key, bytes: upload.bytes, filename: upload.filename };
    },
    ...workflowAdapter(cfg),
    masterKey: masterKeyLoader(cfg),
    // One per process (a Lambda container, or `npm start`): reads by a key verified in the last seconds
    // skip reading it again (docs/decisions/0008-verified-keys-for-reads.md).
    verifiedKeys: verifiedKeys(),
    policy: {
      allowKeyInQuery: cfg.ALLOW_KEY_IN_QUERY,
      allowKeyInForm: cfg.ALLOW_KEY_IN_FORM,
      guestTrialCredits: cfg.GUEST_TRIAL_CREDITS,
      guestSessionsPerAddressPerDay: cfg.GUEST_SESSIONS_PER_ADDRESS_PER_DAY,
    },
    rates: {
      counter: table.requests,
      key: { perSecond: cfg.RATE_LIMIT_KEY_PER_SECOND, burst: cfg.RATE_LIMIT_KEY_BURST },
      guest: { perSecond: cfg.RATE_LIMIT_GUEST_PER_SECOND, burst: cfg.RATE_LIMIT_GUEST_BURST },
      now: () => systemClock.now().getTime(),
    },
    batchConcurrency: cfg.BATCH_CONCURRENCY,
    /** Whether webhooks and `url` sources may reach loopback (OUTBOUND_ALLOW_LOOPBACK). */
    allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
    maxSourceBytes: cfg.MAX_SOURCE_BYTES,
    maxBodyBytes: cfg.MAX_SOURCE_BYTES,
    maxPhotoBytes: cfg.MAX_PHOTO_BYTES,
    maxArchiveBytes: cfg.MAX_ARCHIVE_BYTES,
    // Outbound HTTP (and its address checks) and the webhook metrics are imported on first use: few
    // requests reach them, and every cold start would pay for them.
    fetchSource: async (url: string) => {
      const { fetchOutbound } = await import('#http/outbound.ts');
      const fetched = await fetchOutbound(url, {
        allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
        timeoutMs: cfg.OUTBOUND_TIMEOUT_MS,
        maxBytes: cfg.MAX_SOURCE_BYTES,
      });
      const name = new URL(fetched.finalUrl).pathname.split('/').pop() || null;
      return { bytes: fetched.bytes, filename: name, contentType: fetched.contentType };
    },
    webhooks: deferred<WebhookSender>(
      async () => {
        const [{ countedWebhookSender }, { httpWebhookSender }] = await Promise.all([
          import('#aws/metrics.ts'),
          import('#http/webhook-sender.ts'),
        ]);
        return countedWebhookSender(
          httpWebhookSender({
            allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
            timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
          }),
        );
      },
      { post: true },
    ),
    logger,
  };
}

export type ApiWiring = ReturnType<typeof apiWiring>;

/** Built on first use, once per cold start: importing a handler never reads configuration. */
export const deps: () => ApiWiring = oncePerConfig((cfg) => apiWiring(cfg));
