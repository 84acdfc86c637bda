import { dynamodbClient, eventbridgeClient, s3Client, sfnClient } from '#aws/clients.ts';
import { countedWebhookSender } from '#aws/observability.ts';
import { bucketAdapters, eventsAdapter, systemClock, tableAdapters, workflowAdapter } from '#aws/wiring.ts';
import { config } from '#config';
import { httpWebhookSender } from '#http/webhook-sender.ts';
import { withBatchHooks } from './batch.ts';

/**
 * Composition roots of the state machine's task functions, one per task, each with only the clients
 * its role allows: no bucket for any of them, the workflow only for settlement (a batch's next item),
 * the event bus only for the webhook task.
 */
const once = <T>(build: () => T): (() => T) => {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
};

const webhookSender = () => {
  const cfg = config();
  return countedWebhookSender(
    httpWebhookSender({ allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK, timeoutMs: cfg.WEBHOOK_TIMEOUT_MS }),
  );
};

export const prepareDeps = once(() => {
  const cfg = config();
  const { jobs } = tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) });
  return { jobs, clock: systemClock };
});

export const settleDeps = once(() => {
  const cfg = config();
  return withBatchHooks({
    ...tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) }),
    ...workflowAdapter(cfg, { sfn: sfnClient(cfg) }),
    webhooks: webhookSender(),
    clock: systemClock,
  });
});

export const deliverDeps = once(() => {
  const cfg = config();
  return {
    ...tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) }),
    ...eventsAdapter(cfg, { eventbridge: eventbridgeClient(cfg) }),
    webhooks: webhookSender(),
    clock: systemClock,
  };
});

/** The archive workflow's task: a batch's archive in, its photos and items out, or its download built. */
export const archiveDeps = once(() => {
  const cfg = config();
  return withBatchHooks({
    ...tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) }),
    ...bucketAdapters(cfg, { s3: s3Client(cfg) }),
    ...workflowAdapter(cfg, { sfn: sfnClient(cfg) }),
    webhooks: webhookSender(),
    clock: systemClock,
    maxSourceBytes: cfg.MAX_SOURCE_BYTES,
    maxPhotoBytes: cfg.MAX_PHOTO_BYTES,
  });
});

/** The sweeper of stuck work: the table and both workflows (it restarts or fails what stopped moving). */
export const sweepDeps = once(() => {
  const cfg = config();
  return withBatchHooks({
    ...tableAdapters(cfg, { dynamodb: dynamodbClient(cfg) }),
    ...workflowAdapter(cfg, { sfn: sfnClient(cfg) }),
    webhooks: webhookSender(),
    clock: systemClock,
  });
});
