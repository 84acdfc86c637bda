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

/** A PNG whose IHDR claims any size: the header is all the limits and createJob read of an image. */
export function pngClaiming(width: number, height: number, extraChunk?: Buffer): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr[16] = 8;
  ihdr[17] = 2;
  const idat = Buffer.from([0, 0, 0, 0, ...Buffer.from('IDAT'), 0, 0, 0, 0]);
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), ihdr, extraChunk ?? Buffer.alloc(0), idat]);
}
