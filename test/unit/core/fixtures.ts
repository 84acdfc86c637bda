import type { Job } from '#core/jobs/job.ts';

export function aJob(overrides: Partial<Job> = {}): Job {
  return {
    id: 'job_0123456789abcdefghjkmnpq',
    seq: 1_700_000_000_000_000,
    ownerId: 'key_1',
    account: 'key_1',
    route: 'jobs',
    operation: 'plate',
    status: 'queued',
    stage: 'queued',
    cancelRequested: false,
    costCredits: 5,
    reservedCredits: 5,
    chargedCredits: 0,
    attempts: 0,
    createdAt: '2026-11-22T08:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    params: {
      plateColor: '#141414',
      plateSmoothing: true,
      plateMaskOnly: false,
      background: 'studio',
      backgroundFileKey: null,
      webhookUrl: null,
    },
    source: {
      key: 'sources/x/source.jpg',
      contentType: 'image/jpeg',
      bytes: 10,
      sha256: 'ab',
      originalName: null,
    },
    output: null,
    error: null,
    idempotencyKey: null,
    retries: 0,
    version: 1,
    ...overrides,
  };
}
