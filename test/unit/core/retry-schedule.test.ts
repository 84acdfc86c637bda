import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeRetrySchedule, retryScheduleSeconds } from '#core/webhooks/retry-schedule.ts';
import { webhookRetry } from '../../../lib/config.ts';

describe('the webhook retry schedule', () => {
  it('is the one the state machine runs, and the document says how long it takes', () => {
    expect(webhookRetry).toMatchObject({ intervalSeconds: 30, backoffRate: 4, maxAttempts: 7 });
    // 30 s, 2 min, 8 min, 32 min, 2 h 8 min, then the 4 h cap twice: 10 h 50 min 30 s at most.
    expect(retryScheduleSeconds(webhookRetry)).toBe(39_030);
    expect(describeRetrySchedule(webhookRetry)).toBe('7 times over about 11 hours');
  });

  it('follows a changed schedule', () => {
    const short = { intervalSeconds: 60, backoffRate: 2, maxAttempts: 3, maxDelaySeconds: 3600 };
    expect(describeRetrySchedule(short)).toBe('3 times over about 7 minutes');
    expect(retryScheduleSeconds({ ...short, maxAttempts: 8 })).toBe(
      60 + 120 + 240 + 480 + 960 + 1920 + 3600 + 3600,
    );
  });

  it('is what the prose says: every "N attempts over about …" in README and docs/ follows the schedule', () => {
    const repo = path.resolve(import.meta.dirname, '..', '..', '..');
    const records = readdirSync(path.join(repo, 'docs', 'decisions')).map((f) => `docs/decisions/${f}`);
    const docs = ['README.md', ...['runbook.md', 'webhooks.md'].map((f) => `docs/${f}`), ...records];
    // 1 attempt and `maxAttempts` retries, over the longest the retries can take.
    const expected = describeRetrySchedule(webhookRetry).replace(
      /^\d+ times/,
      `${webhookRetry.maxAttempts + 1} attempts`,
    );
    const stated = docs.flatMap((file) =>
      [
        ...readFileSync(path.join(repo, file), 'utf8').matchAll(
          /\d+ attempts over about \d+ (hours|minutes)/g,
        ),
      ].map((match) => `${file}: ${match[0]}`),
    );
    expect(stated.length).toBeGreaterThan(0);
    expect(stated.filter((line) => !line.endsWith(`: ${expected}`))).toEqual([]);
  });
});
