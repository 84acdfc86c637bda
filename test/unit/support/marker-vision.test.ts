import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { resolveParams } from '#core/jobs/params.ts';
import { markedPhoto, markerOperationRunner } from '../../support/marker-vision.ts';

/** The API tests' runner without models decides by the photo, through the real pipelines. */
describe('the marker runner (test/support/marker-vision.ts)', () => {
  const runner = markerOperationRunner();
  const run = async (operation: Parameters<typeof runner.run>[0], source: Buffer, params = {}) =>
    runner.run(operation, {
      source,
      sourceSha256: 'sha',
      params: { ...resolveParams(params, {}), backgroundFileKey: null, webhookUrl: null },
      background: null,
    });
  const pixelAt = async (image: Buffer, x: number, y: number) => {
    const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
    return [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
  };

  it('fills the marker plate with the plate colour and says where it is', async () => {
    const result = await run('plate', await markedPhoto(), { plateColor: '#ff00ff' });
    // The marker plate of the default photo spans x 204-276, y 208-226.
    expect(result.plates).toEqual([
      {
        corners: [
          [204, 208],
          [276, 208],
          [276, 226],
          [204, 226],
        ],
        score: 1,
      },
    ]);
    const [r, g, b] = await pixelAt(result.files[0]!.bytes, 240, 220);
    expect(r).toBeGreaterThan(200);
    expect(g).toBeLessThan(60);
    expect(b).toBeGreaterThan(200);
  });

  it('finds no plate on a photo without a marker: 803, as the models would answer', async () => {
    await expect(run('plate', await markedPhoto({ plate: false }))).rejects.toMatchObject({ code: 803 });
    await expect(run('analyze', await markedPhoto({ plate: false }))).rejects.toMatchObject({ code: 800 });
  });

  it('cuts the car out from its border-coloured ground and composites a preset', async () => {
    const result = await run('studio_background', await markedPhoto({ format: 'png' }));
    expect(result.files.map((file) => file.name).sort()).toEqual([
      'background_mask.png',
      'plate_mask.png',
      'result.png',
    ]);
    const mask = result.files.find((file) => file.name === 'background_mask.png')!.bytes;
    expect((await pixelAt(mask, 240, 150))[0]).toBe(255);
    expect((await pixelAt(mask, 10, 10))[0]).toBe(0);
  });

  it('refuses what is not an image, as every operation does', async () => {
    await expect(run('plate', Buffer.from('not an image'))).rejects.toMatchObject({ code: 415 });
  });
});
