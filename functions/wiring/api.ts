import { countedWebhookSender, logger } from '#aws/observability.ts';
import { type DataPlane, deps as dataPlane } from '#aws/wiring.ts';
import { fetchOutbound } from '#http/outbound.ts';
import { httpWebhookSender } from '#http/webhook-sender.ts';
import { withBatchHooks } from './batch.ts';

/**
 * The API functions' composition root: the table, the bucket and the workflow (layers/aws/wiring.ts),
 * plus the outbound HTTP clients for `url` sources and redeliveries, and the function's logger. Their role
 * grants exactly this.
 */
function apiWiring(base: DataPlane) {
  const cfg = base.config;
  return {
    ...base,
    fetchSource: async (url: string) => {
      const fetched = await fetchOutbound(url, {
        allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK,
        timeoutMs: cfg.OUTBOUND_TIMEOUT_MS,
        maxBytes: cfg.MAX_SOURCE_BYTES,
      });
      const name = new URL(fetched.finalUrl).pathname.split('/').pop() || null;
      return { bytes: fetched.bytes, filename: name, contentType: fetched.contentType };
    },
    webhooks: countedWebhookSender(
      httpWebhookSender({ allowLoopback: cfg.OUTBOUND_ALLOW_LOOPBACK, timeoutMs: cfg.WEBHOOK_TIMEOUT_MS }),
    ),
    logger,
  };
}

export type ApiWiring = ReturnType<typeof apiWiring>;

let instance: ApiWiring | undefined;
/** Built on first use, once per cold start: importing a handler never reads configuration. */
export const deps = (): ApiWiring => {
  instance ??= apiWiring(dataPlane());
  return instance;
};

let batches: ReturnType<typeof withBatchHooks<ApiWiring>> | undefined;
/** `deps()` plus the hooks batches add (batch.ts). */
export const batchDeps = () => {
  batches ??= withBatchHooks(deps());
  return batches;
};
