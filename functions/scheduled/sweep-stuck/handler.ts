import middy from '@middy/core';
import { logger, observability } from '#aws/observability.ts';
import { telemetry } from '#core/telemetry-names.ts';
import { type SweepReport, sweepStuck } from '#core/use-cases/sweep-stuck.ts';
import { settleDeps } from '#wiring/workflow.ts';

/**
 * Run by a schedule (every 5 minutes in AWS; at start and every minute locally): jobs and batches that
 * have not moved past their deadline are started again or failed with their credits released.
 */
export const handler = middy<unknown, SweepReport>()
  .use(observability(() => ({})))
  .handler(async () => {
    // It needs what settlement does: the table and the workflows (it restarts or fails what stopped moving).
    const report = await sweepStuck(settleDeps());
    const moved =
      report.restarted.length +
      report.failed.length +
      report.handedOver.length +
      report.batchesAdvanced.length +
      report.batchesFailed.length;
    // The StuckWork alarm counts these lines by their message (lib/constructs/monitoring.ts).
    if (moved > 0) logger.warn(telemetry.logMatches.stuckWorkMovedOn.message, { ...report });
    return report;
  });
