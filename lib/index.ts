/**
 * The CDK constructs of photo-jobs for deployers' own apps (docs/deploy.md):
 *
 * ```ts
 * import { PhotoJobs } from 'photo-jobs-cdk';
 * new PhotoJobs(stack, 'Jobs', {});
 * ```
 */

import { assertSupportedCdkLib } from './cdk-lib-version.ts';

export { JobWorkflow, type JobWorkflowProps, type WebhookRetrySchedule } from './constructs/job-workflow.ts';
export { MasterKey } from './constructs/master-key.ts';
export {
  metricsNamespace,
  PhotoJobsMonitoring,
  type PhotoJobsMonitoringProps,
} from './constructs/monitoring.ts';
export {
  type ApiThrottle,
  defaultApiThrottle,
  PhotoJobs,
  type PhotoJobsProps,
} from './constructs/photo-jobs.ts';
export { PhotoJobsData, type PhotoJobsDataProps } from './constructs/photo-jobs-data.ts';
export type { TracingMode } from './constructs/tracing.ts';

// At import, before any construct runs on an aws-cdk-lib that lacks what it uses.
assertSupportedCdkLib();
