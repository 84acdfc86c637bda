import { describe, expect, it } from 'vitest';
import { jobEnvelope } from '#core/jobs/envelope.ts';
import { aJob } from './fixtures.ts';

describe('the job envelope', () => {
  const envelope = (overrides: Parameters<typeof aJob>[0]) => jobEnvelope(aJob(overrides), null);

  it('names the background only for the operations that draw one', () => {
    for (const operation of ['plate', 'plate_mask', 'background_mask', 'analyze'] as const)
      expect(envelope({ operation }).background, operation).toBeNull();
    expect(envelope({ operation: 'studio_background' }).background).toBe('studio');
    expect(envelope({ operation: 'background' }).background).toBe('studio');
  });

  it('says custom when a background file is drawn', () => {
    const job = aJob({ operation: 'studio_background' });
    expect(
      jobEnvelope({ ...job, params: { ...job.params, backgroundFileKey: 'assets/k/bg.png' } }, null),
    ).toMatchObject({ background: 'custom' });
  });
});
