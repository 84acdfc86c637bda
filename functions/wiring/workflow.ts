import { dynamodbClient } from '#aws/clients.ts';
import { countedWebhookSender } from '#aws/metrics.ts';
import { bucketAdapters, eventsAdapter, systemClock, tableAdapters, workflowAdapter } from '#aws/wiring.ts';
import { type Config, oncePerConfig } from '#config';
import { httpWebhookSender } from '#http/webhook-sender.ts';
import { withBatchHooks } from './batch.ts';

/**
 * Composition roots of the state machine's task functions, one per task, each with only the clients
 * its role allows: no bucket for any of them, the workflow only for settlement (a batch's next item),
 * the event bus only for the webhook task.
 */
const webhookSender = (cfg: Config) => {
  return countedWebhookSender(
    httpWebhookSender({ allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK, timeoutMs: cfg.WEBHOOK_TIMEOUT_MS }),
  );
};

export const prepareDeps = oncePerConfig((cfg) => {
  const { jobs } = tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) });
  return { jobs, clock: systemClock };
});

/** The table, the webhook sender and the clock: what every task but preparation starts from. */
const tableTask = (cfg: Config) => ({
  ...tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) }),
  webhooks: webhookSender(cfg),
  clock: systemClock,
});

export const settleDeps = oncePerConfig((cfg) => {
  return withBatchHooks({ ...tableTask(cfg), ...workflowAdapter(cfg) });
});

export const deliverDeps = oncePerConfig((cfg) => {
  return { ...tableTask(cfg), ...eventsAdapter(cfg) };
});

/** The archive workflow's task: a batch's archive in, its photos and items out, or its download built. */
export const archiveDeps = oncePerConfig((cfg) => {
  return withBatchHooks({
    ...tableTask(cfg),
    ...bucketAdapters(cfg),
    ...workflowAdapter(cfg),
    maxSourceBytes: cfg.MAX_SOURCE_BYTES,
    maxPhotoBytes: cfg.MAX_PHOTO_BYTES,
  });
});
