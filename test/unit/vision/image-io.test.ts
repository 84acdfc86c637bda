import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { SourceImageError, UnsupportedMediaTypeError } from '#core/errors.ts';
import { decodeSource, encodeResult } from '#vision/image-io.ts';

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
