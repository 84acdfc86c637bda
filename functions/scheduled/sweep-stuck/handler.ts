import { type SweepReport, sweepStuck } from '#core/use-cases/sweep-stuck.ts';
import { sweepDeps } from '#wiring/workflow.ts';

/**
 * Run by a schedule (every 5 minutes in AWS; at start and every minute locally): jobs and batches that
 * have not moved past their deadline are started again or failed with their credits released.
 */
export const handler = async (): Promise<SweepReport> => {
  const report = await sweepStuck(sweepDeps());
  const moved =
    report.restarted.length +
    report.failed.length +
    report.batchesAdvanced.length +
    report.batchesFailed.length;
  if (moved > 0) console.log(JSON.stringify({ level: 'warn', message: 'stuck work moved on', ...report }));
  return report;
};
