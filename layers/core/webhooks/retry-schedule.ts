/**
 * When the workflow retries a webhook delivery the receiver did not accept: 1 attempt + `maxAttempts`
 * retries. Full jitter: each wait is random between 0 and min(interval × rate^(n-1), maxDelay) = 30 s,
 * 2 min, 8 min, 32 min, 2 h 8 min, 4 h, 4 h. The state machine (lib/) is built from it and the OpenAPI
 * document describes it, so both read it here.
 */
export const WEBHOOK_RETRY_SCHEDULE = {
  intervalSeconds: 30,
  backoffRate: 4,
  maxAttempts: 7,
  maxDelaySeconds: 4 * 60 * 60,
} as const;

export interface RetrySchedule {
  intervalSeconds: number;
  backoffRate: number;
  maxAttempts: number;
  maxDelaySeconds: number;
}

/** The longest the retries can take: every wait at its cap (jitter only shortens them). */
export const retryScheduleSeconds = (schedule: RetrySchedule = WEBHOOK_RETRY_SCHEDULE): number =>
  Array.from({ length: schedule.maxAttempts }, (_, n) =>
    Math.min(schedule.intervalSeconds * schedule.backoffRate ** n, schedule.maxDelaySeconds),
  ).reduce((sum, wait) => sum + wait, 0);

/** `7 times over about 11 hours`: the schedule in a sentence. */
export function describeRetrySchedule(schedule: RetrySchedule = WEBHOOK_RETRY_SCHEDULE): string {
  const seconds = retryScheduleSeconds(schedule);
  const span =
    seconds >= 2 * 3600 ? `${Math.round(seconds / 3600)} hours` : `${Math.round(seconds / 60)} minutes`;
  return `${schedule.maxAttempts} times over about ${span}`;
}
