import { describe, expect, it } from 'vitest';
import { jobEnvelope, resultPath } from '#core/jobs/envelope.ts';
import { aJob } from './fixtures.ts';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const DAY = 86_400_000;

describe('the job envelope', () => {
  const envelope = (overrides: Parameters<typeof aJob>[0]) => jobEnvelope(aJob(overrides), null, NOW);

  it('names the background only for the operations that draw one', () => {
    for (const operation of ['plate', 'plate_mask', 'background_mask', 'analyze'] as const)
      expect(envelope({ operation }).background, operation).toBeNull();
    expect(envelope({ operation: 'studio_background' }).background).toBe('studio');
    expect(envelope({ operation: 'background' }).background).toBe('studio');
  });

  it('says custom when a background file is drawn', () => {
    const job = aJob({ operation: 'studio_background' });
    expect(
      jobEnvelope({ ...job, params: { ...job.params, backgroundFileKey: 'assets/k/bg.png' } }, null, NOW),
    ).toMatchObject({ background: 'custom' });
  });
});

describe('the job envelope of a result that expires', () => {
  const job = aJob({
    operation: 'background',
    status: 'success',
    stage: 'done',
    finishedAt: '2026-11-22T08:00:00.000Z',
    output: {
      url: resultPath(aJob().id, 'result.jpg'),
      background_mask_url: resultPath(aJob().id, 'background_mask.png'),
      mask_url: resultPath(aJob().id, 'background_mask.png'),
      plate_mask_url: resultPath(aJob().id, 'plate_mask.png'),
      output_kind: 'image',
      inference_cached: false,
      model_version: {},
      plates_detected: 1,
    },
  });
  const at = (days: number) => jobEnvelope(job, null, new Date(NOW.getTime() + days * DAY));
  const envelope = (overrides: Parameters<typeof aJob>[0]) => jobEnvelope(aJob(overrides), null, NOW);

  it('shows when the result files are deleted, 30 days after the job finished', () => {
    expect(at(0)).toMatchObject({ expires_at: '2026-12-22T08:00:00.000Z', expires_in_days: 30 });
  });

  it('links to the files until then', () => {
    const shown = at(30 - 1 / DAY);
    expect(shown.url).toBe(`/api/v1/results/${job.id}/result.jpg`);
    expect(shown.output).toMatchObject({ url: shown.url, plate_mask_url: expect.any(String) });
    expect(shown.links.result).toBe(shown.url);
  });

  it('no longer links to any file from then on, and keeps everything else', () => {
    const shown = at(30);
    for (const field of ['url', 'plate_mask_url', 'background_mask_url', 'mask_url'])
      expect(shown, field).not.toHaveProperty(field);
    expect(shown.output).toEqual({
      output_kind: 'image',
      inference_cached: false,
      model_version: {},
      plates_detected: 1,
    });
    expect(shown.links).not.toHaveProperty('result');
    expect(shown).toMatchObject({ status: 'success', result: true, expires_at: '2026-12-22T08:00:00.000Z' });
  });

  it('has no expiry without result files: a failed job, an analysis', () => {
    expect(envelope({ status: 'failed', finishedAt: NOW.toISOString() }).expires_at).toBeNull();
    const analysis = {
      analysis: {},
      output_kind: 'analysis' as const,
      inference_cached: false,
      model_version: {},
    };
    expect(
      envelope({ operation: 'analyze', status: 'success', finishedAt: NOW.toISOString(), output: analysis })
        .expires_at,
    ).toBeNull();
  });
});
