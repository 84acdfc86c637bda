/**
 * What the `analyze` head sees of a photo, pure: evidence from the models (COCO objects, plates, a
 * MobileNetV2 feature map) becomes one feature vector.
 */
import { type Box, nonMaxSuppression, type Size } from '#vision/math/geometry.ts';
import { type ObjectCandidate, VEHICLE_CLASS_IDS } from '#vision/math/nanodet.ts';
import { outsideShare } from '#vision/math/plate-evidence.ts';

/** Objects and plates below these scores are not evidence. */
export const OBJECT_SCORE_THRESHOLD = 0.3;
export const PLATE_SCORE_THRESHOLD = 0.3;

export interface PlateEvidence {
  readonly box: Box;
  readonly score: number;
}

/** What the detectors found, in source-image pixels. */
export interface Evidence {
  readonly image: Size;
  readonly objects: readonly ObjectCandidate[];
  readonly plates: readonly PlateEvidence[];
}

/** MobileNetV2's last feature map, channel-major (CHW). */
interface FeatureMapLike {
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  readonly data: ArrayLike<number>;
}

/**
 * Vehicles above the threshold, one per object: NanoDet often reports one car as car, truck and bus at
 * once (NMS runs per class), so a vehicle overlapping a better-scored one by IoU >= 0.5 is dropped.
 */
export function distinctVehicles(objects: readonly ObjectCandidate[]): ObjectCandidate[] {
  const vehicles = objects.filter(
    (o) => VEHICLE_CLASS_IDS.has(o.classId) && o.score >= OBJECT_SCORE_THRESHOLD,
  );
  return nonMaxSuppression(
    vehicles.map((v) => v.box),
    vehicles.map((v) => v.score),
    0.5,
  ).map((i) => vehicles[i]!);
}

/** The car the photo is about: the vehicle with the best score x sqrt(area), so a small sharp car behind loses. */
export function mainVehicle(objects: readonly ObjectCandidate[]): ObjectCandidate | undefined {
  let best: ObjectCandidate | undefined;
  let bestRank = 0;
  for (const o of distinctVehicles(objects)) {
    const rank = o.score * Math.sqrt(o.box.w * o.box.h);
    if (rank > bestRank) {
      best = o;
      bestRank = rank;
    }
  }
  return best;
}

export const centreInside = (b: Box, outer: Box): boolean => {
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  return cx > outer.x && cx < outer.x + outer.w && cy > outer.y && cy < outer.y + outer.h;
};

/**
 * A plate is part of the photo: at most half of it outside (the same measure as the finder's gate), and
 * narrower than it. LPD-YuNet answers a flat picture with a box twice the photo's width at score 0.3-0.5,
 * which would otherwise make a blank picture an "exterior rear".
 */
const plausiblePlate = (p: PlateEvidence, image: Size): boolean =>
  p.box.w <= image.width && outsideShare(p.box, image) <= 0.5;

/** The plate on the main car (centre inside its box), or the best plate when no car was found. */
export function mainPlate(
  evidence: Evidence,
  car = mainVehicle(evidence.objects),
): PlateEvidence | undefined {
  return evidence.plates
    .filter(
      (p) =>
        p.score >= PLATE_SCORE_THRESHOLD &&
        plausiblePlate(p, evidence.image) &&
        (!car || centreInside(p.box, car.box)),
    )
    .sort((a, b) => b.score - a.score)[0];
}

/** Where the feature map is taken: the main car with 5% of its size around it, else the whole image. */
export function featureRegion(evidence: Evidence): Box | undefined {
  const car = mainVehicle(evidence.objects);
  if (!car) return undefined;
  const { x, y, w, h } = car.box;
  const x0 = Math.max(0, x - 0.05 * w);
  const y0 = Math.max(0, y - 0.05 * h);
  const x1 = Math.min(evidence.image.width, x + 1.05 * w);
  const y1 = Math.min(evidence.image.height, y + 1.05 * h);
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

const mirrorBox = (b: Box, width: number): Box => ({ ...b, x: width - b.x - b.w });

/** The evidence of the horizontally flipped photo. */
export function mirrorEvidence(evidence: Evidence): Evidence {
  const { width } = evidence.image;
  return {
    image: evidence.image,
    objects: evidence.objects.map((o) => ({ ...o, box: mirrorBox(o.box, width) })),
    plates: evidence.plates.map((p) => ({ ...p, box: mirrorBox(p.box, width) })),
  };
}

export const GEOMETRY_FEATURES = [
  'car_found',
  'car_score',
  'car_area',
  'car_log_aspect',
  'car_centre_x',
  'car_centre_y',
  'car_touches_left',
  'car_touches_right',
  'vehicle_count',
  'image_log_aspect',
  'plate_found',
  'plate_score',
  'plate_x_in_car',
  'plate_y_in_car',
  'plate_width_in_car',
  'plate_log_aspect',
  'plate_off_centre',
] as const;

/**
 * Car box and plate geometry, relative to the image and to the car. Positions are centred on 0 so that
 * mirroring the photo flips their sign: that is what lets a head tell left from right.
 */
export function geometryFeatures(evidence: Evidence): number[] {
  const { width: W, height: H } = evidence.image;
  const car = mainVehicle(evidence.objects);
  const vehicles = distinctVehicles(evidence.objects).length;
  const out: number[] = [];
  if (car) {
    const b = car.box;
    out.push(
      1,
      car.score,
      (b.w * b.h) / (W * H),
      Math.log(Math.max(b.w, 1) / Math.max(b.h, 1)),
      (b.x + b.w / 2) / W - 0.5,
      (b.y + b.h / 2) / H - 0.5,
      b.x <= 1 ? 1 : 0,
      b.x + b.w >= W - 1 ? 1 : 0,
    );
  } else {
    out.push(0, 0, 0, 0, 0, 0, 0, 0);
  }
  out.push(vehicles, Math.log(W / H));
  const plate = mainPlate(evidence, car);
  if (plate) {
    const ref = car?.box ?? { x: 0, y: 0, w: W, h: H };
    const px = (plate.box.x + plate.box.w / 2 - ref.x) / ref.w - 0.5;
    out.push(
      1,
      plate.score,
      px,
      (plate.box.y + plate.box.h / 2 - ref.y) / ref.h - 0.5,
      plate.box.w / ref.w,
      Math.log(Math.max(plate.box.w, 1) / Math.max(plate.box.h, 1)),
      Math.abs(px),
    );
  } else {
    out.push(0, 0, 0, 0, 0, 0, 0);
  }
  return out;
}

/** MobileNetV2's channels, and the CNN block of the head's input: three values per channel. */
const CNN_CHANNELS = 1280;
export const CNN_FEATURE_COUNT = 3 * CNN_CHANNELS;

/** The feature maps of a photo the head reads: the car crop, and each half of it on its own. */
export interface CarMaps {
  readonly whole: FeatureMapLike;
  readonly leftHalf: FeatureMapLike;
  readonly rightHalf: FeatureMapLike;
}

/** The left and right halves of the feature region, each squeezed to MobileNetV2's 224 px on its own. */
export function regionHalves(region: Box): [Box, Box] {
  const half = region.w / 2;
  return [
    { ...region, w: half },
    { ...region, x: region.x + half, w: half },
  ];
}

const channelMean = (map: FeatureMapLike, c: number): number => {
  const size = map.width * map.height;
  let sum = 0;
  for (let i = c * size; i < (c + 1) * size; i++) sum += map.data[i]!;
  return sum / size;
};

/**
 * Per channel: the mean over the car's map (what is there); the mean of its left three columns minus
 * that of the right three (where: a global pool averages it away); and the mean over the left half's own
 * map minus the right half's. The last is what tells a front three-quarter from the opposite rear
 * three-quarter: at 224 px for the whole car both are the same wedge, while each half seen at 224 px
 * shows its end of the car (grille and headlights, or tail lights and boot) well enough to say which end
 * is on which side (docs/decisions/0038-analyze-head-and-refusals.md; figures in docs/quality.md, Analysis).
 */
export function cnnFeatures(maps: CarMaps): Float32Array {
  const { whole } = maps;
  const { channels, height, width, data } = whole;
  const side = Math.floor((width - 1) / 2);
  const out = new Float32Array(channels * 3);
  for (let c = 0; c < channels; c++) {
    let left = 0;
    let right = 0;
    for (let y = 0; y < height; y++) {
      const row = (c * height + y) * width;
      for (let x = 0; x < side; x++) {
        left += data[row + x]!;
        right += data[row + width - 1 - x]!;
      }
    }
    out[c] = channelMean(whole, c);
    out[channels + c] = (left - right) / (side * height);
    out[2 * channels + c] = channelMean(maps.leftHalf, c) - channelMean(maps.rightHalf, c);
  }
  return out;
}

/** The head's input: geometry features, then the CNN features of the feature region. */
export function assembleFeatures(evidence: Evidence, maps: CarMaps): Float32Array {
  const geometry = geometryFeatures(evidence);
  const cnn = cnnFeatures(maps);
  const out = new Float32Array(geometry.length + cnn.length);
  out.set(geometry);
  out.set(cnn, geometry.length);
  return out;
}

/**
 * How much the CNN sees: the length of the channel-mean block of a feature vector. A blank, flat or
 * washed-out picture is far below any labelled photo (grey 12, a smooth gradient 16, the weakest
 * labelled interior 21); a softmax head alone would still call such a picture an interior.
 */
export function featureStrength(features: ArrayLike<number>, channels = CNN_CHANNELS): number {
  let sum = 0;
  for (let c = 0; c < channels; c++) sum += features[GEOMETRY_FEATURES.length + c]! ** 2;
  return Math.sqrt(sum);
}
