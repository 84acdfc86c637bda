import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { SourceImageError } from '#core/errors.ts';
import { BACKGROUND_PRESETS } from '#core/jobs/job.ts';
import { type BackdropLayout, backdropSvg, renderBackdrop } from '#vision/backdrops.ts';

const layout: BackdropLayout = { width: 640, height: 480, horizonY: 260, focusX: 320, groundY: 400 };
const noShadow = { ambient: null, contact: null };
const luma = (b: Buffer, x: number, y: number) => {
  const o = (y * layout.width + x) * 3;
  return 0.299 * b[o]! + 0.587 * b[o + 1]! + 0.114 * b[o + 2]!;
};
const mean = (b: Buffer): [r: number, g: number, b: number] => {
  const sum = [0, 0, 0];
  for (let i = 0; i < b.length; i += 3) for (let c = 0; c < 3; c++) sum[c]! += b[i + c]!;
  const [r, g, bl] = sum.map((s) => s / (b.length / 3));
  return [r!, g!, bl!];
};

describe('renderBackdrop presets', () => {
  it.each(BACKGROUND_PRESETS)('draws %s as a lit room, not a flat colour', async (preset) => {
    const b = await renderBackdrop({ kind: 'preset', preset }, layout, noShadow);
    expect(b.length).toBe(640 * 480 * 3);
    // Wall: brighter towards the horizon than at the top (the light behind the car).
    expect(luma(b, 320, 250)).toBeGreaterThan(luma(b, 320, 10) + 8);
    // Floor: perspective falloff, darker towards the camera.
    expect(luma(b, 320, 300)).toBeGreaterThan(luma(b, 320, 475) + 8);
    // Vignette: the corners are darker than the middle.
    expect(luma(b, 2, 2)).toBeLessThan(luma(b, 320, 200));
    expect(luma(b, 637, 477)).toBeLessThan(luma(b, 320, 400));
  });

  it('gives each preset its own character', async () => {
    const [studio, warm, graphite, showroom] = await Promise.all(
      BACKGROUND_PRESETS.map((preset) =>
        renderBackdrop({ kind: 'preset', preset }, layout, noShadow).then(mean),
      ),
    );
    expect(studio![0]).toBeGreaterThan(170);
    expect(graphite![0]).toBeLessThan(80);
    expect(warm![0] - warm![2]).toBeGreaterThan(25);
    expect(Math.abs(studio![0] - studio![2])).toBeLessThan(12);
    expect(showroom).not.toEqual(studio);
  });

  it('lays the showroom floor out in tiles converging on the car', () => {
    const svg = backdropSvg('showroom', layout);
    expect(svg).toContain('mask="url(#joints)"');
    expect(svg.match(/L/g)!.length).toBeGreaterThan(5);
    expect(backdropSvg('studio', layout)).not.toContain('joints');
  });

  it('darkens the floor under the car with its shadow', async () => {
    const shadow = {
      ambient: { cx: 320, cy: 390, rx: 200, ry: 40, opacity: 0.5 },
      contact: { left: 100, top: 395, width: 440, height: 10, alpha: new Uint8Array(4400).fill(200) },
    };
    const [plain, shaded] = await Promise.all([
      renderBackdrop({ kind: 'preset', preset: 'studio' }, layout, noShadow),
      renderBackdrop({ kind: 'preset', preset: 'studio' }, layout, shadow),
    ]);
    expect(luma(shaded, 320, 380)).toBeLessThan(luma(plain, 320, 380) - 10);
    expect(luma(shaded, 150, 400)).toBeLessThan(luma(plain, 150, 400) * 0.5);
    expect(luma(shaded, 320, 100)).toBe(luma(plain, 320, 100));
  });
});

describe('renderBackdrop with a supplied picture', () => {
  it('scales it to cover the frame, centred, oriented and in sRGB', async () => {
    // 200 x 100: left half red, right half blue; covering 640 x 480 crops the sides.
    const half = { width: 100, height: 100, channels: 3 as const };
    const picture = await sharp({ create: { ...half, background: '#ff0000' } })
      .extend({ right: 100, background: '#0000ff' })
      .jpeg()
      .toBuffer();
    const b = await renderBackdrop({ kind: 'file', bytes: picture }, layout, noShadow);
    expect(b.length).toBe(640 * 480 * 3);
    const at = (x: number) => [...b.subarray((240 * 640 + x) * 3, (240 * 640 + x) * 3 + 3)];
    expect(at(5)[0]).toBeGreaterThan(200);
    expect(at(635)[2]).toBeGreaterThan(200);
  });

  it('answers 400 when the picture cannot be decoded', async () => {
    const broken = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64)]);
    await expect(renderBackdrop({ kind: 'file', bytes: broken }, layout, noShadow)).rejects.toBeInstanceOf(
      SourceImageError,
    );
  });
});
