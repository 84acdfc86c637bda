import type { WebhookSender } from '#core/ports.ts';
import { OutboundError, type OutboundPolicy, requestOutbound } from './outbound.ts';

/**
 * Webhook POSTs through the same vetted, pinned client as source downloads. Redirects are not followed: a
 * 3xx is a failed attempt (a receiver's URL must answer itself; following would also re-send the signed
 * body to wherever the Location points). The answer's body is not read.
 */
export function httpWebhookSender(options: OutboundPolicy & { timeoutMs: number }): WebhookSender {
  return {
    async post(url, headers, body) {
      const started = performance.now();
      try {
        const response = await requestOutbound(url, {
          ...options,
          method: 'POST',
          headers,
          body,
          maxBytes: 0,
          maxRedirects: 0,
        });
        const redirect = response.status >= 300 && response.status < 400;
        return {
          statusCode: response.status,
          error: redirect ? `HTTP ${response.status}: redirects are not followed` : null,
          latencyMs: performance.now() - started,
        };
      } catch (error) {
        if (!(error instanceof OutboundError)) throw error;
        return { statusCode: null, error: error.message, latencyMs: performance.now() - started };
      }
    },
  };
}
