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
  /**
   * What the alarms match in logs rather than in published metrics: the sweeper's log message when it moved
   * stuck work on, and the job state that records a webhook given up; with the metric each filter feeds.
   */
  logMatches: {
    stuckWorkMovedOn: { message: 'stuck work moved on', metric: 'StuckWorkMovedOn' },
    webhookGivenUp: { state: 'MarkDeliveryFailed', metric: 'WebhookDeliveriesGivenUp' },
  },
} as const;
