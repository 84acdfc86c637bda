import { describe, expect, it } from 'vitest';
import { BadRequestError } from '#core/errors.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import { polygonArea, type Quad } from '#vision/math/geometry.ts';
import { fillPlates } from '#vision/plate-fill.ts';

const image = (channels: 3 | 4 = 3): DecodedImage => ({
  width: 100,
  height: 60,
  channels,
  format: channels === 4 ? 'image/png' : 'image/jpeg',
  pixels: Buffer.alloc(100 * 60 * channels, channels === 4 ? 0 : 128),
});
const rect: Quad = [
  { x: 20, y: 20 },
  { x: 80, y: 20 },
  { x: 80, y: 40 },
  { x: 20, y: 40 },
];
const at = (img: DecodedImage, x: number, y: number) => {
  const o = (y * img.width + x) * img.channels;
  return [...img.pixels.subarray(o, o + img.channels)];
};
const filled = (options: Parameters<typeof fillPlates>[2], quads: Quad[] = [rect], img = image()) => {
  fillPlates(img, quads, options);
  return img;
};
const countColour = (img: DecodedImage, colour: number[]) => {
  let n = 0;
  for (let i = 0; i < img.pixels.length; i += img.channels) {
    if (colour.every((v, k) => img.pixels[i + k] === v)) n++;
  }
  return n;
};

describe('fillPlates', () => {
  it('fills exactly the pixels whose centres lie in the quad when hard-edged', () => {
    const out = filled({ color: '#FF00ff', smoothing: false, maskOnly: false });
    expect(countColour(out, [255, 0, 255])).toBe(60 * 20);
    expect(at(out, 20, 20)).toEqual([255, 0, 255]);
    expect(at(out, 19, 20)).toEqual([128, 128, 128]);
    expect(at(out, 80, 30)).toEqual([128, 128, 128]);
  });

  it('follows a tilted quad', () => {
    const tilted: Quad = [
      { x: 10, y: 20 },
      { x: 70, y: 8 },
      { x: 74, y: 28 },
      { x: 14, y: 40 },
    ];
    const out = filled({ color: '#000000', smoothing: false, maskOnly: false }, [tilted]);
    expect(countColour(out, [0, 0, 0]) / polygonArea(tilted)).toBeCloseTo(1, 1);
    expect(at(out, 12, 12)).toEqual([128, 128, 128]);
  });

  it('grows the quad and softens its edge with smoothing', () => {
    const out = filled({ color: '#ffffff', smoothing: true, maskOnly: false });
    // 15% of the 20 px height on every side (edges at y = 17 and x = 17), across a 1.5 px ramp.
    expect(at(out, 50, 18)).toEqual([255, 255, 255]);
    expect(at(out, 18, 30)).toEqual([255, 255, 255]);
    for (const [x, y] of [
      [50, 17],
      [50, 16],
      [17, 30],
    ] as const) {
      expect(at(out, x, y)[0]).toBeGreaterThan(128);
      expect(at(out, x, y)[0]).toBeLessThan(255);
    }
    expect(at(out, 50, 15)).toEqual([128, 128, 128]);
  });

  it('ignores smoothing when maskOnly is set', () => {
    const out = filled({ color: '#ffffff', smoothing: true, maskOnly: true });
    expect(countColour(out, [255, 255, 255])).toBe(60 * 20);
  });

  it('makes the fill opaque on a transparent PNG', () => {
    const out = filled({ color: '#102030', smoothing: false, maskOnly: false }, [rect], image(4));
    expect(at(out, 50, 30)).toEqual([16, 32, 48, 255]);
    expect(at(out, 5, 5)).toEqual([0, 0, 0, 0]);
  });

  it('keeps the fill colour on the soft edge over transparent pixels (no dark fringe)', () => {
    const out = filled({ color: '#ffffff', smoothing: true, maskOnly: false }, [rect], image(4));
    // The ramp's pixels at y 16-17: partly covered, fully white where they show at all.
    for (const y of [16, 17]) {
      const [r, g, b, a] = at(out, 50, y);
      expect([r, g, b]).toEqual([255, 255, 255]);
      expect(a).toBeGreaterThan(0);
      expect(a).toBeLessThan(255);
    }
  });

  it('clips quads that reach past the image', () => {
    const moved = rect.map((c) => ({ x: c.x + 50, y: c.y + 30 })) as unknown as Quad;
    const out = filled({ color: '#ffffff', smoothing: true, maskOnly: false }, [moved]);
    expect(at(out, 99, 59)).toEqual([255, 255, 255]);
  });

  it('takes the legacy colour names and refuses anything else', () => {
    expect(at(filled({ color: 'graphite', smoothing: false, maskOnly: false }), 50, 30)).toEqual([
      20, 20, 20,
    ]);
    expect(() =>
      fillPlates(image(), [rect], { color: 'magenta', smoothing: false, maskOnly: false }),
    ).toThrow(BadRequestError);
  });
});

describe('fillPlates, the plate whole (studio)', () => {
  const whole = { color: '#ffffff', smoothing: true, maskOnly: false, whole: true };
  it('covers the plate’s frame with a wider margin than the plain fill', () => {
    const plain = countColour(filled({ ...whole, whole: false }), [255, 255, 255]);
    expect(countColour(filled(whole), [255, 255, 255])).toBeGreaterThan(plain);
    // 25% of the 20 px height: the frame's row at y = 16 is covered.
    expect(at(filled(whole), 50, 16)).toEqual([255, 255, 255]);
  });

  it('fills a plate the photo’s edge cuts up to that edge', () => {
    const cut: Quad = [
      { x: 8, y: 20 },
      { x: 60, y: 20 },
      { x: 60, y: 40 },
      { x: 8, y: 40 },
    ];
    expect(at(filled(whole, [cut]), 0, 30)).toEqual([255, 255, 255]);
    expect(at(filled({ ...whole, whole: false }, [cut]), 0, 30)).toEqual([128, 128, 128]);
  });
});
