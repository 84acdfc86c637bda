import { describe, expect, it } from 'vitest';
import { expandBox, keepMainSubject, mainCarBox } from '#vision/math/main-subject.ts';
import type { Matte } from '#vision/math/matte.ts';
import { foregroundComponents, regionCoverage, shareOutside } from '#vision/math/matte-regions.ts';
import { blank, paint } from './matte-fixtures.ts';

const at = (m: Matte, x: number, y: number) => m.alpha[y * m.width + x]!;

/**
 * A street scene 300 x 120: the main car body x 80..220, rows 40..90, wheels below to row 100, a mirror
 * sticking out left of NanoDet's box by 3 px and a roof antenna above it; a parked car at x 230..290.
 */
const street = () => {
  const m = blank(300, 120);
  paint(m, 80, 40, 220, 90); // body
  paint(m, 95, 90, 125, 100); // wheels
  paint(m, 175, 90, 205, 100);
  paint(m, 79, 55, 82, 60); // mirror, 1 px past the body's left
  paint(m, 150, 30, 152, 40); // antenna above the roof, outside the box
  paint(m, 232, 50, 290, 95); // the neighbour
  paint(m, 220, 70, 232, 75); // joined to the main car by a bumper-height blob
  return m;
};
const mainBox = { x: 82, y: 40, w: 138, h: 60 };
const neighbourBox = { x: 230, y: 48, w: 62, h: 50 };

describe('mainCarBox', () => {
  it('picks the large central car over a small sharp one and over a large one at the frame edge', () => {
    const image = { width: 1000, height: 600 };
    const central = { x: 350, y: 200, w: 300, h: 200 };
    const small = { x: 700, y: 250, w: 120, h: 80 };
    const edge = { x: 0, y: 0, w: 320, h: 210 };
    expect(mainCarBox([small, edge, central], image)).toBe(central);
    expect(mainCarBox([small], image)).toBe(small);
    expect(mainCarBox([], image)).toBeNull();
  });
});

describe('keepMainSubject', () => {
  it('clears a neighbouring car joined to the main one and keeps wheels, mirror and antenna', () => {
    const m = street();
    const result = keepMainSubject(m, mainBox, [mainBox, neighbourBox], { haloRadius: 2 });
    expect(at(m, 260, 70)).toBe(0); // neighbour gone
    expect(at(m, 150, 60)).toBe(255); // body
    expect(at(m, 110, 95)).toBe(255); // wheel
    expect(at(m, 79, 57)).toBe(255); // mirror
    expect(at(m, 151, 32)).toBe(255); // antenna
    expect(result.otherObjects).toBeGreaterThan(50 * 45);
    expect(shareOutside(m, expandBox(mainBox, 0.2, m))).toBe(0);
  });

  it('keeps the corner of the main car that sticks out of its box under a car behind it', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 230, 100); // the car reaches x 230, NanoDet's box stops at 215
    paint(m, 225, 30, 300, 80); // a car behind, its box overlapping the main car's rear corner
    const box = { x: 40, y: 40, w: 175, h: 60 };
    keepMainSubject(m, box, [box, { x: 222, y: 28, w: 78, h: 60 }]);
    expect(at(m, 228, 90)).toBe(255); // the corner below the car behind
    expect(at(m, 228, 60)).toBe(255); // and where the boxes overlap
    expect(at(m, 280, 50)).toBe(0); // the car behind itself
  });

  it('keeps the front of a car NanoDet boxed twice, each box short of one end', () => {
    const m = blank(300, 120);
    paint(m, 0, 30, 300, 100); // a car the frame cuts on both sides
    const rear = { x: 0, y: 28, w: 200, h: 74 };
    const front = { x: 90, y: 35, w: 210, h: 62 }; // 52% of it inside the rear box
    keepMainSubject(m, rear, [rear, front]);
    expect(at(m, 290, 60)).toBe(255); // the front, which clearing `front` as another car cut off
    expect(at(m, 10, 60)).toBe(255);
  });

  it('still clears a car behind whose box lies mostly beside the main one', () => {
    const m = blank(300, 120);
    paint(m, 20, 40, 200, 100);
    paint(m, 190, 30, 300, 90); // joined to the main car where they overlap
    const box = { x: 20, y: 40, w: 180, h: 60 };
    keepMainSubject(m, box, [box, { x: 150, y: 28, w: 150, h: 64 }]); // a third of it inside
    expect(at(m, 280, 50)).toBe(0);
    expect(at(m, 100, 70)).toBe(255);
  });

  it('still treats a small car further back, half inside the main box, as another car', () => {
    const scene = () => {
      const m = blank(300, 120);
      paint(m, 40, 40, 260, 100); // the main car
      paint(m, 200, 26, 240, 42); // a car behind, seen over the roof
      return m;
    };
    const box = { x: 40, y: 40, w: 220, h: 60 };
    const behind = { x: 200, y: 26, w: 40, h: 28 }; // half of it inside the main box
    const m = scene();
    keepMainSubject(m, box, [box, behind]);
    expect(at(m, 220, 28)).toBe(0); // its part outside the main box's margin is cleared
    const joined = scene();
    keepMainSubject(joined, box, [box, behind], { sameCarSize: 0 });
    expect(at(joined, 220, 28)).toBe(255); // joined as the main car, it would have stayed
  });

  it('clears a car behind that the segmenter is unsure of inside the main box, keeps the sure body', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 260, 100); // the main car, sure
    paint(m, 180, 20, 250, 40, 190); // a car behind over the boot, joined to it, unsure
    paint(m, 40, 38, 260, 40, 150); // the body's own soft edge along the roof
    const box = { x: 40, y: 18, w: 220, h: 82 }; // NanoDet's main box reaches over it
    const behind = { x: 175, y: 15, w: 80, h: 30 };
    keepMainSubject(m, box, [box, behind], { haloRadius: 2 });
    expect(at(m, 215, 25)).toBe(0); // the car behind
    expect(at(m, 215, 39)).toBe(150); // the edge of the main car's roof under it
    expect(at(m, 215, 60)).toBe(255);
  });

  it('leaves what the segmenter is unsure of where no other vehicle was seen', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 260, 100);
    paint(m, 180, 20, 250, 40, 190);
    const box = { x: 40, y: 18, w: 220, h: 82 };
    keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 215, 25)).toBe(190);
  });

  it('drops a disconnected blob and a faint ghost beside the roof, keeps the soft edge', () => {
    const m = blank(200, 120);
    paint(m, 40, 40, 160, 100);
    paint(m, 39, 40, 40, 100, 90); // soft edge pixel column, part of the outline
    paint(m, 45, 22, 60, 30, 110); // ghost above the roof line: soft, inside the touch margin's reach
    paint(m, 5, 15, 15, 25); // a solid island away from the car, inside reach
    const box = { x: 40, y: 40, w: 120, h: 60 };
    const result = keepMainSubject(m, box, [box], { haloRadius: 2, reach: 0.5 });
    expect(at(m, 50, 25)).toBe(0);
    expect(at(m, 10, 20)).toBe(0);
    expect(at(m, 39, 60)).toBe(90);
    expect(result.islands).toBe(100);
    expect(result.halo).toBe(15 * 8);
  });

  it('keeps a wheel that touches the box but is joined to the body only by soft pixels', () => {
    const m = blank(200, 120);
    paint(m, 40, 40, 160, 88);
    paint(m, 40, 88, 160, 90, 100); // soft gap under the sill
    paint(m, 55, 90, 80, 100); // wheel: own component, inside the box
    const box = { x: 40, y: 40, w: 120, h: 60 };
    keepMainSubject(m, box, [box]);
    expect(at(m, 60, 95)).toBe(255);
    expect(at(m, 60, 89)).toBe(100);
  });

  it('clears what lies beyond reach of the box even when joined to the car', () => {
    const m = blank(300, 100);
    paint(m, 50, 30, 150, 70);
    paint(m, 150, 45, 290, 55); // a long object (a fence rail) running out of the car's side
    const box = { x: 50, y: 30, w: 100, h: 40 };
    keepMainSubject(m, box, [box], { reach: 0.15 });
    expect(at(m, 160, 50)).toBe(255);
    expect(at(m, 200, 50)).toBe(0);
  });

  it('clears a post running to the image’s top behind a roof the frame does not cut', () => {
    const m = blank(300, 100);
    paint(m, 60, 10, 240, 90); // roof 10 px below the top: the reach (16 px) would pass the top edge
    paint(m, 150, 6, 152, 10); // an antenna
    paint(m, 200, 0, 205, 10); // a lamp post from the top edge down to the roof
    const box = { x: 60, y: 10, w: 180, h: 80 };
    keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 202, 5)).toBe(0);
    expect(at(m, 151, 8)).toBe(255);
    expect(at(m, 202, 20)).toBe(255); // the roof under it
  });

  it('clears a pole rising behind the roof past the reach, keeps an antenna that ends below it', () => {
    const m = blank(300, 140);
    paint(m, 80, 60, 220, 110); // body; box top = roof line at 60
    paint(m, 150, 53, 152, 60); // antenna: 7 px over a 50 px tall car, the reach is 10
    paint(m, 190, 0, 196, 60); // lamp post behind the roof, from the image's top down to the roof
    const box = { x: 80, y: 60, w: 140, h: 50 };
    const result = keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 151, 55)).toBe(255);
    expect(at(m, 193, 55)).toBe(0);
    expect(at(m, 193, 30)).toBe(0);
    expect(at(m, 150, 80)).toBe(255);
    expect(result.otherObjects).toBeGreaterThan(6 * 50);
  });

  it('keeps the roof of a car the frame’s top cuts, which touches the image’s top edge', () => {
    const m = blank(300, 100);
    paint(m, 60, 0, 240, 80);
    const box = { x: 60, y: 4, w: 180, h: 76 };
    keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 150, 1)).toBe(255);
  });

  it('drops a small part floating apart from the car, keeps the other half of a car split by a pole', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 150, 100); // front half
    paint(m, 154, 40, 260, 100); // rear half, past a 4 px pole cleared by the segmenter
    paint(m, 100, 103, 106, 106); // an exhaust tip floating under the bumper, inside the box
    const box = { x: 40, y: 40, w: 220, h: 70 };
    const result = keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 200, 70)).toBe(255);
    expect(at(m, 102, 104)).toBe(0);
    expect(result.detached).toBe(18);
  });

  it('fills a hole in a door, leaves the space under the car and a wing’s gap open', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 260, 100);
    paint(m, 120, 60, 128, 68, 0); // a hole in a door: 64 px, under 1% of the car
    paint(m, 200, 45, 230, 55, 0); // the gap under a rear wing: 300 px, 3% of the car
    paint(m, 60, 80, 240, 100, 0); // the floor under the car, open at the bottom: not enclosed
    paint(m, 40, 100, 60, 110); // wheels standing on the floor
    paint(m, 240, 100, 260, 110);
    const box = { x: 40, y: 40, w: 220, h: 70 };
    const result = keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 124, 64)).toBe(255);
    expect(result.holes).toBe(64);
    expect(at(m, 150, 90)).toBe(0);
    expect(at(m, 215, 50)).toBe(0);
  });

  it('fills a larger hole low in the car (a door, a wheel), not one as large above its middle', () => {
    const m = blank(300, 120);
    paint(m, 40, 40, 260, 100);
    paint(m, 80, 80, 100, 95, 0); // a hole in a wheel: 300 px, 2.3% of the car, centre below the middle
    paint(m, 200, 45, 220, 60, 0); // the gap under a rear wing: the same size, above the middle
    const box = { x: 40, y: 40, w: 220, h: 70 };
    const result = keepMainSubject(m, box, [box], { haloRadius: 2 });
    expect(at(m, 90, 88)).toBe(255);
    expect(at(m, 210, 52)).toBe(0);
    expect(result.holes).toBe(300);
  });

  it('leaves a matte holding only the main car unchanged', () => {
    const m = street();
    paint(m, 220, 40, 300, 120, 0);
    const before = Uint8Array.from(m.alpha);
    const result = keepMainSubject(m, mainBox, [mainBox]);
    expect(result).toEqual({ otherObjects: 0, islands: 0, halo: 0, detached: 0, holes: 0, applied: true });
    expect(m.alpha).toEqual(before);
  });

  it('leaves the matte alone when the segmenter found nothing at the main car', () => {
    const m = blank(200, 100);
    paint(m, 5, 5, 40, 40);
    const before = Uint8Array.from(m.alpha);
    const box = { x: 100, y: 50, w: 60, h: 30 };
    expect(keepMainSubject(m, box, [box]).applied).toBe(false);
    expect(m.alpha).toEqual(before);
  });
});

describe('eval measures', () => {
  it('counts components, outside share and region coverage', () => {
    const m = street();
    expect(foregroundComponents(m)).toHaveLength(1);
    paint(m, 2, 2, 6, 6);
    expect(foregroundComponents(m, 20)).toHaveLength(1);
    expect(foregroundComponents(m, 16)).toHaveLength(2);
    expect(regionCoverage(m, { x: 95, y: 90, w: 30, h: 10 })).toBe(1);
    expect(regionCoverage(m, { x: 0, y: 100, w: 50, h: 20 })).toBe(0);
    expect(shareOutside(blank(4, 4), mainBox)).toBe(0);
  });
});
