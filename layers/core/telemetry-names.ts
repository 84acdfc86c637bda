/**
 * The names under which the functions log and publish metrics. The construct (lib/) sets them on every
 * function and builds its alarms and dashboard on the same metric names, so they are written once, here.
 */
export const telemetry = {
  serviceName: 'photo-jobs',
  metricsNamespace: 'PhotoJobs',
  metrics: {
    /** A job accepted by POST /jobs, /process or /analyze (not a replay); dimension `operation`. */
    jobsCreated: 'JobsCreated',
    /** A job settled as succeeded; dimension `operation`. */
    jobsSucceeded: 'JobsSucceeded',
    /** A job settled as failed; dimensions `operation` and `code` (the spec's error code). */
    jobsFailed: 'JobsFailed',
    /** Milliseconds one inference took, cache hits included; dimension `operation`. */
    inferenceDuration: 'InferenceDuration',
    /** One POST to a webhook receiver; dimension `outcome` (`delivered` or `failed`). */
    webhookAttempts: 'WebhookAttempts',
  },
} as const;
