import { describe, expect, it } from 'vitest';
import { UnclassifiableError } from '#core/errors.ts';
import headJson from '#models/heads/analyze-head.json' with { type: 'json' };
import { HEADS } from '#models/manifest.ts';
import { decide, toAnalysis } from '#vision/math/decision.ts';
import {
  assembleFeatures,
  cnnFeatures,
  type Evidence,
  featureRegion,
  featureStrength,
  GEOMETRY_FEATURES,
  geometryFeatures,
  mainPlate,
  mainVehicle,
  mirrorEvidence,
  regionHalves,
} from '#vision/math/features.ts';
import {
  type AnalyzeHead,
  headProbabilities,
  mirrorAveraged,
  parseHead,
  softmax,
} from '#vision/math/head.ts';
import type { ObjectCandidate } from '#vision/math/nanodet.ts';
import {
  LICENSE_PLATE_ID,
  mirrorView,
  PHOTO_TYPES,
  type PhotoType,
  VIEWS,
  type View,
} from '#vision/math/vocabulary.ts';

const obj = (
  classId: number,
  score: number,
  x: number,
  y: number,
  w: number,
  h: number,
): ObjectCandidate => ({
  classId,
  score,
  box: { x, y, w, h },
});

const scene: Evidence = {
  image: { width: 400, height: 200 },
  objects: [
    obj(2, 0.8, 100, 50, 200, 100), // the car
    obj(7, 0.5, 102, 52, 196, 98), // the same car as a truck
    obj(2, 0.6, 360, 20, 30, 15), // a small car behind
    obj(0, 0.4, 10, 40, 30, 80), // a person beside
    obj(56, 0.2, 150, 80, 10, 10), // under the threshold
  ],
  plates: [
    { box: { x: 120, y: 120, w: 40, h: 10 }, score: 0.9 },
    { box: { x: 365, y: 28, w: 10, h: 3 }, score: 0.4 },
  ],
};

/** A 4-channel, 2x5 feature map: channel c has value c everywhere except column x, which adds x. */
const map = {
  channels: 4,
  height: 2,
  width: 5,
  data: Float32Array.from({ length: 4 * 2 * 5 }, (_, i) => Math.floor(i / 10) + (i % 5)),
};

describe('softmax', () => {
  it('sums to 1, keeps the order and survives large logits', () => {
    const p = softmax([1000, 1001, 999]);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(p[1]).toBeGreaterThan(p[0]!);
    expect(p[0]).toBeGreaterThan(p[2]!);
    expect(Number.isFinite(p[0])).toBe(true);
  });
});

describe('mirrorView', () => {
  it('swaps left and right and leaves the rest', () => {
    expect(mirrorView('three_quarters_left')).toBe('three_quarters_right');
    expect(mirrorView('rear_three_quarters_right')).toBe('rear_three_quarters_left');
    expect(mirrorView('front')).toBe('front');
    expect(mirrorView('interior')).toBe('interior');
  });
});

describe('the main plate', () => {
  const image = { width: 400, height: 300 };
  it('is never a box the photo cannot hold: a blank picture has no plate to make it an exterior', () => {
    // What LPD-YuNet answers on a flat white 400x300 picture.
    const blankAnswer = { box: { x: -292, y: -57, w: 890, h: 339 }, score: 0.49 };
    expect(mainPlate({ image, objects: [], plates: [blankAnswer] })).toBeUndefined();
    const halfOutside = { box: { x: 350, y: 100, w: 120, h: 40 }, score: 0.9 };
    expect(mainPlate({ image, objects: [], plates: [halfOutside] })).toBeUndefined();
  });

  it('keeps a plate inside the photo, and one cut a little by its edge', () => {
    const inside = { box: { x: 150, y: 200, w: 100, h: 30 }, score: 0.8 };
    const atEdge = { box: { x: 330, y: 200, w: 100, h: 30 }, score: 0.9 };
    expect(mainPlate({ image, objects: [], plates: [inside] })).toEqual(inside);
    expect(mainPlate({ image, objects: [], plates: [inside, atEdge] })).toEqual(atEdge);
  });
});

describe('feature assembly', () => {
  it('picks the main car by score and size, and counts one car seen as car and truck once', () => {
    expect(mainVehicle(scene.objects)).toBe(scene.objects[0]);
    const g = Object.fromEntries(GEOMETRY_FEATURES.map((name, i) => [name, geometryFeatures(scene)[i]]));
    expect(g).toMatchObject({
      car_found: 1,
      car_score: 0.8,
      car_area: 0.25,
      vehicle_count: 2,
      plate_found: 1,
    });
    expect(g.car_centre_x).toBeCloseTo(0, 10);
    // Plate centre at x 140 in a car from 100 to 300: 0.2 of the way, 0.3 left of the middle.
    expect(g.plate_x_in_car).toBeCloseTo(-0.3, 10);
    expect(g.plate_y_in_car).toBeCloseTo(0.25, 10);
    expect(g.plate_width_in_car).toBeCloseTo(0.2, 10);
  });

  it('flips the sign of left/right features in the mirror image and keeps the rest', () => {
    const own = geometryFeatures(scene);
    const mirrored = geometryFeatures(mirrorEvidence(scene));
    GEOMETRY_FEATURES.forEach((name, i) => {
      if (name === 'car_centre_x' || name === 'plate_x_in_car') expect(mirrored[i]).toBeCloseTo(-own[i]!, 10);
      else if (name === 'car_touches_left') expect(mirrored[i]).toBe(own[i + 1]);
      else if (name !== 'car_touches_right') expect(mirrored[i]).toBeCloseTo(own[i]!, 10);
    });
  });

  it('has all zeros for the car and plate when nothing was found', () => {
    const empty: Evidence = { image: { width: 300, height: 300 }, objects: [], plates: [] };
    const g = geometryFeatures(empty);
    expect(g).toHaveLength(GEOMETRY_FEATURES.length);
    expect(g.filter((v) => v !== 0)).toEqual([]);
    expect(featureRegion(empty)).toBeUndefined();
  });

  it('crops the car with 5% around it, inside the image', () => {
    expect(featureRegion(scene)).toEqual({ x: 90, y: 45, w: 220, h: 110 });
  });

  it('pools channel means, left-minus-right column means and left-half-minus-right-half means', () => {
    // The halves: channel c is c + 1 on the left half's map and c on the right half's, but for one
    // channel where the right half sees more (a grille or a tail light on that side).
    const constant = (value: (c: number) => number) => ({
      ...map,
      data: Float32Array.from({ length: 4 * 2 * 5 }, (_, i) => value(Math.floor(i / 10))),
    });
    const maps = {
      whole: map,
      leftHalf: constant((c) => c + 1),
      rightHalf: constant((c) => (c === 2 ? 5 : c)),
    };
    const f = cnnFeatures(maps);
    // Columns 0..4 add 0..4: mean +2; left two columns mean 0.5, right two 3.5.
    expect([...f]).toEqual([2, 3, 4, 5, -3, -3, -3, -3, 1, 1, -2, 1]);
    const x = assembleFeatures(scene, maps);
    expect(x).toHaveLength(GEOMETRY_FEATURES.length + 12);
    expect([...x.slice(GEOMETRY_FEATURES.length)]).toEqual([...f]);
    expect(featureStrength(x, 4)).toBeCloseTo(Math.sqrt(4 + 9 + 16 + 25), 6);
  });

  it('splits the feature region into a left and a right half', () => {
    expect(regionHalves({ x: 90, y: 45, w: 220, h: 110 })).toEqual([
      { x: 90, y: 45, w: 110, h: 110 },
      { x: 200, y: 45, w: 110, h: 110 },
    ]);
  });
});

/** A head over 2 features: x0 large says interior, x0 small podium; x1 large says three_quarters_left. */
function tinyHead(overrides: Partial<AnalyzeHead> = {}): AnalyzeHead {
  return {
    format: 'softmax-head/2',
    version: 'test',
    mean: [0, 0],
    scale: [1, 1],
    weightScale: 0.1,
    photoType: {
      classes: [...PHOTO_TYPES],
      weights: [
        [0, 0],
        [100, 0],
        [-100, 0],
      ],
      bias: [0, 0, 0],
    },
    view: {
      classes: [...VIEWS],
      weights: VIEWS.map((v) => (v === 'three_quarters_left' ? [0, 100] : [0, 0])),
      bias: VIEWS.map(() => 0),
    },
    minTypeConfidence: 0.5,
    minInteriorStrength: 10,
    ...overrides,
  };
}

const types = (p: Partial<Record<PhotoType, number>>) => Float64Array.from(PHOTO_TYPES, (c) => p[c] ?? 0);
const views = (p: Partial<Record<View, number>>) => Float64Array.from(VIEWS, (c) => p[c] ?? 0);
const car = { vehicleFound: true, plateFound: false, strength: 30 };

describe('headProbabilities and decide', () => {
  it('standardises, applies each linear map and its softmax', () => {
    const head = tinyHead({ mean: [1, 0], scale: [2, 1] });
    const p = headProbabilities(head, [3, 1]);
    // x0 -> (3 - 1) / 2 = 1: interior logit 10, exterior 0, podium -10.
    expect(p.photoType[1]).toBeCloseTo(Math.exp(10) / (Math.exp(10) + 1 + Math.exp(-10)), 10);
    // x1 -> 1: three_quarters_left logit 10 against 7 zeros.
    expect(p.view[VIEWS.indexOf('three_quarters_left')]).toBeCloseTo(Math.exp(10) / (Math.exp(10) + 7), 10);
    expect(() => headProbabilities(head, [1])).toThrow(/takes 2 features/);
  });

  it('answers the photo type and the best view with their probabilities', () => {
    const d = decide(
      tinyHead(),
      {
        photoType: types({ exterior: 0.98, interior: 0.02 }),
        view: views({ three_quarters_left: 0.7, front: 0.3 }),
      },
      car,
    );
    expect(d).toEqual({
      photoType: { value: 'exterior', conf: 0.98 },
      view: { value: 'three_quarters_left', conf: 0.7 },
    });
  });

  it('answers podium with a view, and interior without one', () => {
    const podium = decide(
      tinyHead(),
      { photoType: types({ podium: 0.9, exterior: 0.1 }), view: views({ rear: 1 }) },
      car,
    );
    expect(podium).toEqual({ photoType: { value: 'podium', conf: 0.9 }, view: { value: 'rear', conf: 1 } });
    const d = decide(
      tinyHead(),
      { photoType: types({ interior: 0.95, exterior: 0.05 }), view: views({ rear: 1 }) },
      car,
    );
    expect(d).toEqual({ photoType: { value: 'interior', conf: 0.95 } });
  });

  it('takes a plate as a car: a close-up of a front or rear without a whole car box is answered', () => {
    const d = decide(
      tinyHead(),
      { photoType: types({ exterior: 0.9, interior: 0.1 }), view: views({ front: 1 }) },
      { vehicleFound: false, plateFound: true, strength: 30 },
    );
    expect(d.photoType.value).toBe('exterior');
  });

  it('refuses with 800 under the photo-type threshold, an exterior without a car or plate, a featureless interior', () => {
    const unsure = () =>
      decide(
        tinyHead(),
        { photoType: types({ interior: 0.45, exterior: 0.4, podium: 0.15 }), view: views({}) },
        car,
      );
    expect(unsure).toThrow(UnclassifiableError);
    expect(unsure).toThrow(/45% sure/);
    const noCar = () =>
      decide(
        tinyHead(),
        { photoType: types({ exterior: 1 }), view: views({ front: 1 }) },
        { vehicleFound: false, plateFound: false, strength: 30 },
      );
    expect(noCar).toThrow(/no car/);
    const blank = () =>
      decide(
        tinyHead(),
        { photoType: types({ interior: 1 }), view: views({}) },
        { vehicleFound: false, plateFound: false, strength: 5 },
      );
    expect(blank).toThrow(/neither a car nor an interior/);
    const blankWithPlate = () =>
      decide(
        tinyHead(),
        { photoType: types({ podium: 1 }), view: views({ rear: 1 }) },
        { vehicleFound: false, plateFound: true, strength: 5 },
      );
    expect(blankWithPlate).toThrow(/neither a car nor an interior/);
    try {
      blank();
    } catch (error) {
      expect((error as UnclassifiableError).code).toBe(800);
      expect((error as UnclassifiableError).status).toBe(422);
    }
  });

  it('averages with the mirror image, left and right swapped back, the photo type plainly', () => {
    const own = {
      photoType: types({ exterior: 0.8, podium: 0.2 }),
      view: views({ three_quarters_left: 0.8, front: 0.2 }),
    };
    const mirrored = {
      photoType: types({ exterior: 0.6, podium: 0.4 }),
      view: views({ three_quarters_right: 0.6, three_quarters_left: 0.2, front: 0.2 }),
    };
    const p = mirrorAveraged(own, mirrored);
    expect(p.view[VIEWS.indexOf('three_quarters_left')]).toBeCloseTo(0.7, 10);
    expect(p.view[VIEWS.indexOf('three_quarters_right')]).toBeCloseTo(0.1, 10);
    expect(p.view[VIEWS.indexOf('front')]).toBeCloseTo(0.2, 10);
    expect(p.photoType[PHOTO_TYPES.indexOf('exterior')]).toBeCloseTo(0.7, 10);
    expect(p.photoType[PHOTO_TYPES.indexOf('podium')]).toBeCloseTo(0.3, 10);
  });
});

describe('toAnalysis', () => {
  it('puts what is on the main car in detections and the rest in background_detections', () => {
    const analysis = toAnalysis(
      {
        photoType: { value: 'exterior', conf: 0.987 },
        view: { value: 'three_quarters_left', conf: 0.701 },
      },
      scene,
    );
    expect(analysis).toEqual({
      photo_type: { value: 'exterior', label: 'Exterior', source_class: 'car', conf: 99 },
      view: { value: 'three_quarters_left', label: 'Front three-quarter left', conf: 70 },
      detections: { car: { id: 2, conf: 80 }, license_plate: { id: LICENSE_PLATE_ID, conf: 90 } },
      background_detections: {
        car: { id: 2, conf: 60 },
        person: { id: 0, conf: 40 },
        license_plate: { id: LICENSE_PLATE_ID, conf: 40 },
      },
    });
  });

  it('has no view for an interior and puts everything in detections when there is no car', () => {
    const analysis = toAnalysis(
      { photoType: { value: 'interior', conf: 0.9 } },
      { image: { width: 10, height: 10 }, objects: [obj(56, 0.5, 0, 0, 5, 5)], plates: [] },
    );
    expect(analysis).toEqual({
      photo_type: { value: 'interior', label: 'Interior', conf: 90 },
      detections: { chair: { id: 56, conf: 50 } },
      background_detections: {},
    });
  });
});

describe('the fitted head file', () => {
  it('parses, matches the manifest version and stays small', () => {
    const head = parseHead(headJson);
    expect(head.version).toBe(HEADS['analyze-head'].version);
    expect(head.minTypeConfidence).toBeGreaterThanOrEqual(0.5);
    expect(head.minTypeConfidence).toBeLessThan(1);
    expect(JSON.stringify(headJson).length).toBeLessThan(300_000);
  });

  it('is refused when its shape does not fit', () => {
    expect(() =>
      parseHead({ ...headJson, photoType: { ...headJson.photoType, classes: ['interior'] } }),
    ).toThrow(/photoType/);
    expect(() => parseHead({ ...headJson, view: { ...headJson.view, bias: [] } })).toThrow(/view/);
    expect(() =>
      parseHead({
        ...headJson,
        view: { ...headJson.view, weights: headJson.view.weights.map((r) => r.map((w) => w + 0.5)) },
      }),
    ).toThrow(/view/);
    expect(() => parseHead({ ...headJson, format: 'softmax-head/1' })).toThrow(/format/);
    expect(() => parseHead(headJson, 10)).toThrow(/for 10 features/);
  });
});
