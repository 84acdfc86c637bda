import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { Config } from '#config';
import { TransientError } from '#core/errors.ts';
import type { EventPublisher } from '#core/ports.ts';
import { EVENT_SOURCE } from '#core/webhooks/delivery.ts';
import { clientSettings } from './client-settings.ts';

export const eventbridgeClient = (cfg: Config) =>
  new EventBridgeClient(clientSettings(cfg, cfg.EVENTBRIDGE_ENDPOINT));

/**
 * Job events on an EventBridge bus: `source` photo-jobs, `detail-type` the event name (`job.succeeded`,
 * `job.failed`, `job.cancelled`), `detail` as docs/webhooks.md shows. The bus name comes from configuration.
 */
export function eventbridgeEvents(client: EventBridgeClient, busName: string | undefined): EventPublisher {
  return {
    async publish(event) {
      if (!busName) throw new Error('EVENT_BUS_NAME is not configured');
      const output = await client
        .send(
          new PutEventsCommand({
            Entries: [
              {
                EventBusName: busName,
                Source: EVENT_SOURCE,
                DetailType: event.event,
                Time: new Date(event.occurredAt),
                Resources: [],
                Detail: JSON.stringify({
                  event_id: event.eventId,
                  event: event.event,
                  job_id: event.jobId,
                  owner_id: event.ownerId,
                  status: event.status,
                  occurred_at: event.occurredAt,
                  job: event.job,
                }),
              },
            ],
          }),
        )
        .catch((cause: unknown) => {
          throw new TransientError(`The event bus could not take ${event.eventId}`, { cause });
        });
      if (output.FailedEntryCount) {
        const failed = output.Entries?.find((entry) => entry.ErrorCode);
        throw new TransientError(`The event bus refused ${event.eventId}: ${failed?.ErrorCode ?? 'unknown'}`);
      }
    },
  };
}
