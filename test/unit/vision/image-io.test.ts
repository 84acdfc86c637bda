import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { SourceImageError, UnsupportedMediaTypeError } from '#core/errors.ts';
import { besideWhole, decodeSource, encodeResult, openSource, quarterShared } from '#vision/image-io.ts';

const rgb = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 10 } } });

describe('decodeSource', () => {
  it('applies the EXIF orientation', async () => {
    const rotated = await rgb(40, 20).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const image = await decodeSource(rotated);
    expect([image.width, image.height, image.channels, image.format]).toEqual([20, 40, 3, 'image/jpeg']);
    expect(image.pixels).toHaveLength(20 * 40 * 3);
  });

  it('gives 8-bit RGB for greyscale and 16-bit sources', async () => {
    const grey = await decodeSource(await rgb(8, 8).greyscale().jpeg().toBuffer());
    expect(grey.channels).toBe(3);
    const deep = await decodeSource(await rgb(8, 8).toColourspace('rgb16').png().toBuffer());
    expect([deep.channels, deep.pixels.length]).toEqual([3, 8 * 8 * 3]);
    expect(deep.pixels[0]).toBeCloseTo(200, -1);
  });

  it('keeps transparency for PNG only', async () => {
    const transparent = sharp({
      create: { width: 4, height: 4, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    });
    expect((await decodeSource(await transparent.clone().png().toBuffer())).channels).toBe(4);
    const webp = await decodeSource(await transparent.clone().webp({ lossless: true }).toBuffer());
    // Flattened onto white, since the result will be a JPEG.
    expect([webp.channels, webp.pixels[0]]).toEqual([3, 255]);
  });

  it('refuses other formats with 415 and undecodable bytes with 400', async () => {
    await expect(decodeSource(await rgb(4, 4).gif().toBuffer())).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
    const jpeg = await rgb(64, 64).jpeg().toBuffer();
    const corrupt = Buffer.concat([jpeg.subarray(0, 20), Buffer.alloc(200, 0x55)]);
    await expect(decodeSource(corrupt)).rejects.toBeInstanceOf(SourceImageError);
  });
});

describe('encodeResult', () => {
  it('writes JPEG for JPEG and WEBP sources and PNG for PNG, with no metadata at all', async () => {
    const source = await rgb(40, 20)
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: 'SecretCam' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 0/1' } })
      .toBuffer();
    expect((await sharp(source).metadata()).exif).toBeDefined();

    const jpeg = await encodeResult(await decodeSource(source));
    const meta = await sharp(jpeg.data).metadata();
    expect(jpeg.contentType).toBe('image/jpeg');
    expect([meta.format, meta.width, meta.height, meta.exif, meta.icc, meta.xmp, meta.orientation]).toEqual([
      'jpeg',
      20,
      40,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);

    const webp = await encodeResult(await decodeSource(await rgb(4, 4).webp().toBuffer()));
    expect(webp.contentType).toBe('image/jpeg');
    const png = await encodeResult(await decodeSource(await rgb(4, 4).png().toBuffer()));
    expect([png.contentType, (await sharp(png.data).metadata()).format]).toEqual(['image/png', 'png']);
  });
});

/** 800x400, red on the left half and blue on the right: orientation and scale show in its pixels. */
const halves = () =>
  sharp({ create: { width: 800, height: 400, channels: 3, background: { r: 220, g: 20, b: 20 } } }).composite(
    [
      {
        input: { create: { width: 400, height: 400, channels: 3, background: { r: 20, g: 20, b: 220 } } },
        left: 400,
        top: 0,
      },
    ],
  );
const pixel = (image: { width: number; channels: number; pixels: Buffer }, x: number, y: number) => {
  const o = (y * image.width + x) * image.channels;
  return [...image.pixels.subarray(o, o + 3)];
};
const near = (a: number[], b: number[], by: number) => a.every((v, i) => Math.abs(v - b[i]!) <= by);

describe('openSource', () => {
  it('shrinks an EXIF-rotated JPEG on load in the orientation decodeSource gives', async () => {
    // Stored a quarter turn clockwise, with the tag that turns it back: upright it is 800x400.
    const stored = await (
      await halves()
        .png()
        .toBuffer()
        .then((b) => sharp(b).rotate(90))
    )
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 8 })
      .toBuffer();
    const levels = await openSource(stored);
    expect([levels.width, levels.height, levels.format]).toEqual([800, 400, 'image/jpeg']);
    const quarter = await levels.atScale(0.2);
    expect([quarter.width, quarter.height, quarter.channels]).toEqual([200, 100, 3]);
    const whole = await decodeSource(stored);
    for (const [x, y] of [
      [20, 50],
      [180, 50],
    ] as const) {
      expect(near(pixel(quarter, x, y), pixel(whole, x * 4, y * 4), 12)).toBe(true);
    }
    expect(near(pixel(quarter, 20, 50), [220, 20, 20], 16)).toBe(true);
    // Asked for more than a half, the whole photo.
    expect((await levels.atScale(0.6)).pixels.equals(whole.pixels)).toBe(true);
    // Each level is decoded once.
    expect(await levels.atScale(0.9)).toBe(await levels.atScale(0.6));
  });

  it('gives 8-bit sRGB at every level for CMYK and greyscale JPEGs, and the whole photo for PNG', async () => {
    const cmyk = await openSource(await halves().toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer());
    const small = await cmyk.atScale(0.125);
    expect([small.width, small.height, small.channels]).toEqual([100, 50, 3]);
    expect(
      near(
        pixel(small, 10, 25),
        pixel(
          await decodeSource(await halves().toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer()),
          80,
          200,
        ),
        12,
      ),
    ).toBe(true);
    const grey = await (await openSource(await halves().greyscale().jpeg().toBuffer())).atScale(0.25);
    expect([grey.width, grey.channels]).toEqual([200, 3]);
    const png = await openSource(await halves().png().toBuffer());
    expect((await png.atScale(0.1)).width).toBe(800);
  });

  it('refuses what decodeSource refuses, before decoding pixels', async () => {
    await expect(openSource(await rgb(4, 4).gif().toBuffer())).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
    await expect(openSource(await rgb(64, 64).jpeg().toBuffer(), { maxPixels: 1000 })).rejects.toThrow(
      'more than 1000 pixels',
    );
  });
});

describe('quarterShared and besideWhole', () => {
  it('serve every pass at or under a quarter from one quarter-size decode', async () => {
    const levels = await openSource(await halves().jpeg({ quality: 95 }).toBuffer());
    const shared = quarterShared(levels);
    // NanoDet's pass of a 12 MP photo asks for a tenth: no second shrink-on-load decode for it.
    const tenth = await shared.atScale(0.1);
    expect([tenth.width, tenth.height]).toEqual([200, 100]);
    expect(tenth).toBe(await shared.atScale(0.25));
    expect(await shared.atScale(0.3)).toBe(await levels.atScale(0.5));
    const whole = levels.atScale(1);
    const beside = besideWhole(levels, whole);
    expect(await beside.atScale(0.1)).toBe(tenth);
    expect(await beside.atScale(0.3)).toBe(await whole);
  });
});
