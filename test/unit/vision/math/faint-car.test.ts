import { describe, expect, it } from 'vitest';
import { FAINT_LEVEL, faintCarMatte } from '#vision/math/faint-car.ts';
import { matteStats, usableMatte } from '#vision/math/matte.ts';
import { blank, paint } from './matte-fixtures.ts';

/**
 * A car's rear at night filling the frame, as ISNet sees it (ro-0115 of the Romanian night frames): only
 * the two lit lamps are sure foreground; the body around them is faint (alpha 50, about 0.2); a patch of
 * street-light haze, as faint, stands apart in a corner.
 */
const nightRear = () => {
  const m = blank(200, 100);
  paint(m, 30, 20, 170, 90, 50); // body
  paint(m, 40, 40, 44, 44); // lamps, sure (0.16% of the frame)
  paint(m, 156, 40, 160, 44);
  paint(m, 0, 0, 12, 8, 50); // haze, not joined to the body
  return m;
};

describe('faintCarMatte', () => {
  it('turns a night rear that the coverage rule refuses into a solid cut-out of the body', () => {
    const matte = nightRear();
    expect(usableMatte(matteStats(matte)).ok).toBe(false);
    const car = faintCarMatte(matte, [{ x: 5, y: 60, w: 20, h: 15 }])!;
    expect(usableMatte(matteStats(car)).ok).toBe(true);
    expect(matteStats(car).box).toEqual({ x: 30, y: 20, w: 140, h: 70 });
    expect(car.alpha[50 * 200 + 100]).toBe(255);
  });

  it('leaves out faint parts joined neither to a sure pixel nor to a vehicle box', () => {
    const car = faintCarMatte(nightRear(), [{ x: 60, y: 30, w: 80, h: 50 }])!;
    expect(car.alpha[4 * 200 + 6]).toBe(0);
  });

  it('keeps a faint car that NanoDet boxed even without a sure pixel', () => {
    const m = blank(200, 100);
    paint(m, 30, 20, 170, 90, 50);
    const car = faintCarMatte(m, [{ x: 30, y: 20, w: 140, h: 70 }])!;
    expect(usableMatte(matteStats(car)).ok).toBe(true);
  });

  it('invents nothing when no vehicle was seen: a photo with no car keeps its 802', () => {
    expect(faintCarMatte(nightRear(), [])).toBeNull();
  });

  it('finds nothing in a matte below the faint level', () => {
    const m = blank(200, 100);
    paint(m, 30, 20, 170, 90, FAINT_LEVEL - 1);
    expect(faintCarMatte(m, [{ x: 30, y: 20, w: 140, h: 70 }])).toBeNull();
  });
});
