import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { UnsupportedMediaTypeError } from '#core/errors.ts';
import { decodeSource } from '#vision/image-io.ts';
import { ANALYSIS_SIDE, decodeForAnalysis } from '#vision/operations/analyze.ts';

/** Red on the left half, blue on the right: orientation and scale show in its pixels. */
const halves = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 220, g: 20, b: 20 } } }).composite([
    {
      input: {
        create: { width: width / 2, height, channels: 3, background: { r: 20, g: 20, b: 220 } },
      },
      left: width / 2,
      top: 0,
    },
  ]);
const pixel = (image: { width: number; channels: number; pixels: Buffer }, x: number, y: number) => {
  const o = (y * image.width + x) * image.channels;
  return [...image.pixels.subarray(o, o + 3)];
};
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]!) <= 16);
const RED = [220, 20, 20];
const BLUE = [20, 20, 220];

describe('decodeForAnalysis', () => {
  it('decodes a 12 MP JPEG shrunk on load to a quarter, upright when EXIF turns it', async () => {
    const upright = await halves(4000, 3000).jpeg().toBuffer();
    const quarter = await decodeForAnalysis(upright);
    expect([quarter.width, quarter.height, quarter.channels]).toEqual([1000, 750, 3]);
    expect([near(pixel(quarter, 100, 375), RED), near(pixel(quarter, 900, 375), BLUE)]).toEqual([true, true]);

    // Stored a quarter turn clockwise with the tag that turns it back: the same upright picture.
    const stored = await sharp(await halves(4000, 3000).png().toBuffer())
      .rotate(90)
      .jpeg()
      .withMetadata({ orientation: 8 })
      .toBuffer();
    expect((await sharp(stored).metadata()).width).toBe(3000);
    const turned = await decodeForAnalysis(stored);
    expect([turned.width, turned.height]).toEqual([1000, 750]);
    expect([near(pixel(turned, 100, 375), RED), near(pixel(turned, 900, 375), BLUE)]).toEqual([true, true]);
  }, 30_000);

  it('keeps at least ANALYSIS_SIDE on the longest side, and small photos exactly as decodeSource gives them', async () => {
    const justOver = await decodeForAnalysis(await halves(1598, 800).jpeg().toBuffer());
    expect(justOver.width).toBe(1598);
    const panorama = await decodeForAnalysis(await halves(6000, 1000).jpeg().toBuffer());
    expect([panorama.width, panorama.height]).toEqual([1500, 250]);
    expect(panorama.width).toBeGreaterThanOrEqual(ANALYSIS_SIDE);
    const listing = await halves(380, 250).jpeg().toBuffer();
    expect((await decodeForAnalysis(listing)).pixels.equals((await decodeSource(listing)).pixels)).toBe(true);
  });

  it('gives 8-bit sRGB for CMYK, grey-scale, 16-bit PNG and animated WEBP sources', async () => {
    const cmyk = await decodeForAnalysis(await halves(3200, 1600).toColourspace('cmyk').jpeg().toBuffer());
    expect([cmyk.width, cmyk.channels, near(pixel(cmyk, 700, 200), pixel(await blueOf(), 0, 0))]).toEqual([
      800,
      3,
      true,
    ]);
    const grey = await decodeForAnalysis(await halves(2400, 1600).greyscale().jpeg().toBuffer());
    expect([grey.width, grey.height, grey.channels]).toEqual([1200, 800, 3]);
    // PNG has no shrink-on-load: decoded whole, 8 bits a channel.
    const deep = await decodeForAnalysis(
      await halves(2000, 1000).removeAlpha().toColourspace('rgb16').png().toBuffer(),
    );
    expect([deep.width, deep.channels, deep.pixels.length]).toEqual([2000, 3, 2000 * 1000 * 3]);
    const frames = [
      await halves(1700, 900).png().toBuffer(),
      await halves(1700, 900).flop().png().toBuffer(),
    ];
    const animated = await sharp(frames, { join: { animated: true } })
      .webp()
      .toBuffer();
    const first = await decodeForAnalysis(animated);
    expect([first.width, first.height, first.channels]).toEqual([850, 450, 3]);
    expect(near(pixel(first, 50, 200), RED)).toBe(true);
  }, 30_000);

  it('refuses what is not a JPEG, PNG or WEBP with 415', async () => {
    await expect(decodeForAnalysis(Buffer.from('GIF89a not a photo'))).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
  });
});

/** The CMYK round trip of the blue half, as decodeSource gives it. */
const blueOf = async () =>
  decodeSource(
    await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 20, g: 20, b: 220 } } })
      .toColourspace('cmyk')
      .jpeg()
      .toBuffer(),
  );
