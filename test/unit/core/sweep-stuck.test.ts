import { describe, expect, it } from 'vitest';
import { type Job, sweeperWatches } from '#core/jobs/job.ts';
import type { ActiveWork, ArchiveWorkflow } from '#core/ports.ts';
import { DEADLINES, STUCK_ERROR, sweepStuck } from '#core/use-cases/sweep-stuck.ts';
import { memoryBatches } from './memory-batches.ts';
import { memoryStore } from './memory-ports.ts';

const T0 = Date.parse('2026-11-22T08:00:00.000Z');

function aJob(id: string, overrides: Partial<Job>): Job {
  return {
    id,
    seq: 1,
    ownerId: 'key_1',
    account: 'key_1',
    route: 'jobs',
    operation: 'background',
    status: 'queued',
    stage: 'queued',
    cancelRequested: false,
    costCredits: 5,
    reservedCredits: 5,
    chargedCredits: 0,
    attempts: 0,
    createdAt: new Date(T0).toISOString(),
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
    source: { key: 'sources/x.jpg', contentType: 'image/jpeg', bytes: 1, sha256: 'x', originalName: null },
    output: null,
    error: null,
    idempotencyKey: null,
    retries: 0,
    version: 1,
    ...overrides,
  };
}

/** Three jobs whose credits are reserved: queued without execution, processing for too long, fresh. */
function setup() {
  const store = memoryStore({ key_1: 15 });
  store.balances.set('key_1', { available: 0, reserved: 15, usedTotal: 0 });
  const jobs = [
    aJob('job_lost', {}),
    aJob('job_hung', {
      status: 'processing',
      stage: 'preparing',
      attempts: 1,
      startedAt: new Date(T0 + 1000).toISOString(),
    }),
    aJob('job_fresh', { createdAt: new Date(T0 + DEADLINES.processingMs).toISOString() }),
  ];
  for (const job of jobs) store.stored.set(job.id, job);
  let now = T0;
  const active: ActiveWork = {
    activeJobs: async () => [...store.stored.values()].filter(sweeperWatches),
    activeBatches: async () => [],
  };
  const archiveWorkflow: ArchiveWorkflow = { start: async () => 'running' };
  const handedOver: string[] = [];
  const followUpStarts = { refusals: 0 };
  const deps = {
    ...store,
    clock: { now: () => new Date(now) },
    batches: memoryBatches(store).repository,
    workflow: {
      async start(jobId: string, attempt: number) {
        store.started.push({ jobId, attempt });
      },
    },
    active,
    archiveWorkflow,
    followUps: {
      async deliver(jobId: string, attempt: number) {
        if (followUpStarts.refusals-- > 0) throw new Error('Step Functions is unavailable');
        handedOver.push(`${jobId}-${attempt}`);
      },
    },
  };
  return { deps, store, handedOver, followUpStarts, at: (ms: number) => (now = T0 + ms) };
}

describe('sweepStuck', () => {
  it('leaves work alone before its deadline', async () => {
    const t = setup();
    t.at(DEADLINES.queuedMs - 1);
    expect(await sweepStuck(t.deps)).toEqual({
      restarted: [],
      failed: [],
      handedOver: [],
      batchesAdvanced: [],
      batchesFailed: [],
    });
    expect(t.store.started).toEqual([]);
  });

  it('starts a lost job again under its attempt, and fails it once it has been queued past the give-up deadline', async () => {
    const t = setup();
    t.at(DEADLINES.queuedMs + 5000);
    const [a, b] = await Promise.all([sweepStuck(t.deps), sweepStuck(t.deps)]);
    // Express runs are not told apart by name: both sweepers may start one; each names the same attempt.
    expect(new Set(t.store.started.map((s) => `${s.jobId}-${s.attempt}`))).toEqual(new Set(['job_lost-1']));
    expect([...a.restarted, ...b.restarted].every((id) => id === 'job_lost')).toBe(true);
    expect([...a.failed, ...b.failed]).toEqual([]);

    t.at(DEADLINES.queuedGiveUpMs + 5000);
    const [c, d] = await Promise.all([sweepStuck(t.deps), sweepStuck(t.deps)]);
    expect([...c.failed, ...d.failed].sort()).toEqual(['job_hung', 'job_lost']);
    for (const id of ['job_hung', 'job_lost'])
      expect(t.store.stored.get(id)).toMatchObject({
        status: 'failed',
        error: STUCK_ERROR,
        chargedCredits: 0,
      });
    expect(t.store.stored.get('job_fresh')!.status).toBe('queued');
    // Each failed job's webhook and event are handed to its run's follow-up, once: the sweeper that failed it.
    expect(t.handedOver.sort()).toEqual(['job_hung-1', 'job_lost-1']);
    expect(t.store.balances.get('key_1')).toEqual({ available: 10, reserved: 5, usedTotal: 0 });

    // Nothing is released twice.
    expect((await sweepStuck(t.deps)).failed).toEqual([]);
    expect(t.handedOver).toHaveLength(2);
    expect(t.store.balances.get('key_1')).toEqual({ available: 10, reserved: 5, usedTotal: 0 });
  });

  it('tries the follow-up again at the next sweep when its start failed after the job was failed', async () => {
    const t = setup();
    t.at(DEADLINES.processingMs + 5000);
    t.followUpStarts.refusals = 1;
    await expect(sweepStuck(t.deps)).rejects.toThrow('Step Functions is unavailable');
    // The failure and the release landed; only the webhook is still owed.
    expect(t.store.stored.get('job_hung')).toMatchObject({ status: 'failed', followUpDue: 1 });
    expect(t.store.balances.get('key_1')).toEqual({ available: 5, reserved: 10, usedTotal: 0 });
    expect(t.handedOver).toEqual([]);

    const next = await sweepStuck(t.deps);
    expect(next.handedOver).toEqual(['job_hung']);
    expect(t.handedOver).toContain('job_hung-1');
    expect(t.store.stored.get('job_hung')!.followUpDue).toBeUndefined();
    // Released once, by the sweep that failed it.
    expect(t.store.balances.get('key_1')).toEqual({ available: 5, reserved: 10, usedTotal: 0 });

    const count = t.handedOver.length;
    expect((await sweepStuck(t.deps)).handedOver).toEqual([]);
    expect(t.handedOver).toHaveLength(count);
  });
});
