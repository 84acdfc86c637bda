import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '#core/errors.ts';
import { readImageHeader } from '#core/images.ts';
import { imageProblem, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, MIN_IMAGE_SIDE } from '#core/limits/image.ts';
import { pngClaiming } from './fixtures.ts';

const solid = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 90, g: 120, b: 200 } } });

/** A JPEG whose start-of-frame claims any size, after an APP0 segment. */
function jpegClaiming(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0, 16, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.from([0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.alloc(12)]);
}

describe('image header', () => {
  it('reads the size of real JPEG, PNG and lossy and lossless WEBP files', async () => {
    expect(readImageHeader(await solid(640, 427).jpeg().toBuffer())).toEqual({
      type: 'image/jpeg',
      width: 640,
      height: 427,
      frames: 1,
    });
    expect(readImageHeader(await solid(33, 700).png().toBuffer())).toMatchObject({ width: 33, height: 700 });
    expect(readImageHeader(await solid(301, 203).webp().toBuffer())).toMatchObject({
      width: 301,
      height: 203,
    });
    expect(readImageHeader(await solid(301, 203).webp({ lossless: true }).toBuffer())).toMatchObject({
      width: 301,
      height: 203,
    });
    const extended = await solid(120, 80)
      .ensureAlpha(0.5)
      .webp({ lossless: false, alphaQuality: 50 })
      .toBuffer();
    expect(readImageHeader(extended)).toMatchObject({ width: 120, height: 80, frames: 1 });
  });

  it('reads progressive JPEGs and ones with metadata before the frame', async () => {
    const jpeg = await solid(500, 333)
      .withMetadata({ exif: { IFD0: { Copyright: 'x' } } })
      .jpeg({ progressive: true })
      .toBuffer();
    expect(readImageHeader(jpeg)).toMatchObject({ width: 500, height: 333 });
  });

  it('counts the frames of an animated PNG and WEBP', async () => {
    const actl = Buffer.from([0, 0, 0, 8, ...Buffer.from('acTL'), 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(readImageHeader(pngClaiming(200, 100, actl))).toMatchObject({ frames: 12 });
    const chunk = (name: string, data: Buffer) => {
      const head = Buffer.alloc(8);
      head.write(name, 0, 'latin1');
      head.writeUInt32LE(data.length, 4);
      return Buffer.concat([head, data, Buffer.alloc(data.length & 1)]);
    };
    const vp8x = Buffer.alloc(10);
    vp8x[0] = 0x02;
    vp8x.writeUIntLE(63, 4, 3);
    vp8x.writeUIntLE(47, 7, 3);
    const body = Buffer.concat([
      chunk('VP8X', vp8x),
      chunk('ANIM', Buffer.alloc(6)),
      chunk('ANMF', Buffer.alloc(21)),
      chunk('ANMF', Buffer.alloc(21)),
      chunk('ANMF', Buffer.alloc(21)),
    ]);
    const riff = Buffer.alloc(12);
    riff.write('RIFF', 0, 'latin1');
    riff.writeUInt32LE(body.length + 4, 4);
    riff.write('WEBP', 8, 'latin1');
    expect(readImageHeader(Buffer.concat([riff, body]))).toEqual({
      type: 'image/webp',
      width: 64,
      height: 48,
      frames: 3,
    });
  });

  it('answers null for bytes whose header is cut short or damaged', () => {
    expect(readImageHeader(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]))).toBeNull();
    expect(readImageHeader(jpegClaiming(100, 100).subarray(0, 25))).toBeNull();
    expect(readImageHeader(Buffer.from('GIF89a'))).toBeNull();
    expect(readImageHeader(pngClaiming(0, 100))).toBeNull();
  });
});

describe('image limits', () => {
  const problem = (bytes: Buffer) => imageProblem(bytes, 'file');

  it('lets an ordinary photo through', async () => {
    expect(problem(await solid(1200, 800).jpeg().toBuffer())).toBeNull();
    expect(problem(jpegClaiming(8000, 8000))).toBeNull();
  });

  it.each([
    [
      'more pixels than allowed',
      () => jpegClaiming(10_000, 8000),
      PayloadTooLargeError,
      `limit: ${MAX_IMAGE_PIXELS.toLocaleString('en-US')} pixels`,
    ],
    ['a side over the limit', () => pngClaiming(MAX_IMAGE_SIDE + 1, 100), PayloadTooLargeError, 'px a side'],
    ['a 1×1 pixel', () => pngClaiming(1, 1), BadRequestError, `at least ${MIN_IMAGE_SIDE} px a side`],
    ['a very thin strip', () => pngClaiming(4000, 40), BadRequestError, 'aspect ratio 16:1'],
    ['a 4-billion-pixel claim', () => pngClaiming(0xffffffff, 0xffffffff), PayloadTooLargeError, 'px a side'],
  ])('refuses %s from the header, naming the limit', (_label, bytes, kind, limit) => {
    const refused = problem(bytes());
    expect(refused).toBeInstanceOf(kind);
    expect(refused!.message).toContain(limit);
  });

  it('refuses an animated image with 415', () => {
    const actl = Buffer.from([0, 0, 0, 8, ...Buffer.from('acTL'), 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    const refused = problem(pngClaiming(200, 100, actl));
    expect(refused).toBeInstanceOf(UnsupportedMediaTypeError);
    expect(refused!.message).toContain('animated image (limit: 1 frame)');
  });
});
