/**
 * The `analyze` classifier, pure: evidence from the models (COCO objects, plates, a MobileNetV2 feature
 * map) becomes one feature vector; a fitted softmax head (models/heads/analyze-head.json, fitted by
 * models/fit-analyze-head.ts) turns it into a photo type and, for exteriors, a view.
 */
import { UnclassifiableError } from '#core/errors.ts';
import { type Box, nonMaxSuppression, type Size } from '#vision/math/geometry.ts';
import { COCO_CLASSES, type ObjectCandidate, VEHICLE_CLASS_IDS } from '#vision/math/nanodet.ts';

/** `podium` is in the vocabulary (spec 1) but no labelled podium photo exists yet: the head never says it. */
export const PHOTO_TYPES = ['exterior', 'interior', 'podium'] as const;
export type PhotoType = (typeof PHOTO_TYPES)[number];

/** left/right name the side of the car that is visible (three_quarters_left = front and the car's left). */
export const VIEWS = [
  'front',
  'rear',
  'side_left',
  'side_right',
  'three_quarters_left',
  'three_quarters_right',
  'rear_three_quarters_left',
  'rear_three_quarters_right',
] as const;
export type View = (typeof VIEWS)[number];

/** The head's classes: one for interiors, one per exterior view. */
export const HEAD_CLASSES = ['interior', ...VIEWS] as const;
export type HeadClass = (typeof HEAD_CLASSES)[number];

/** English labels; the only language so far (see docs/decisions.md, "Vision: analyze"). */
export const LABELS: Readonly<Record<PhotoType | View, string>> = {
  exterior: 'Exterior',
  interior: 'Interior',
  podium: 'Podium',
  front: 'Front',
  rear: 'Rear',
  side_left: 'Left side',
  side_right: 'Right side',
  three_quarters_left: 'Front three-quarter left',
  three_quarters_right: 'Front three-quarter right',
  rear_three_quarters_left: 'Rear three-quarter left',
  rear_three_quarters_right: 'Rear three-quarter right',
};

/** Not a COCO class: the plate detector's own, numbered clear of COCO's 0-79. */
export const LICENSE_PLATE_ID = 1000;

/** Objects and plates below these scores are not evidence. */
export const OBJECT_SCORE_THRESHOLD = 0.3;
export const PLATE_SCORE_THRESHOLD = 0.3;

/** The same view seen in a mirror: left and right swap. */
export function mirrorView<T extends HeadClass>(value: T): T {
  if (value.endsWith('_left')) return value.replace(/_left$/, '_right') as T;
  if (value.endsWith('_right')) return value.replace(/_right$/, '_left') as T;
  return value;
}

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
export interface FeatureMapLike {
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

const centreInside = (b: Box, outer: Box): boolean => {
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  return cx > outer.x && cx < outer.x + outer.w && cy > outer.y && cy < outer.y + outer.h;
};

/** The plate on the main car (centre inside its box), or the best plate when no car was found. */
export function mainPlate(
  evidence: Evidence,
  car = mainVehicle(evidence.objects),
): PlateEvidence | undefined {
  return evidence.plates
    .filter((p) => p.score >= PLATE_SCORE_THRESHOLD && (!car || centreInside(p.box, car.box)))
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

/**
 * Per channel: the mean over the whole map, then the mean of the left three columns minus that of the
 * right three. The first says what is there; the second where (front left or right, say), which a
 * global pool would average away.
 */
export function cnnFeatures(map: FeatureMapLike): Float32Array {
  const { channels, height, width, data } = map;
  const side = Math.floor((width - 1) / 2);
  const out = new Float32Array(channels * 2);
  for (let c = 0; c < channels; c++) {
    let all = 0;
    let left = 0;
    let right = 0;
    for (let y = 0; y < height; y++) {
      const row = (c * height + y) * width;
      for (let x = 0; x < width; x++) {
        const v = data[row + x]!;
        all += v;
        if (x < side) left += v;
        else if (x >= width - side) right += v;
      }
    }
    out[c] = all / (width * height);
    out[channels + c] = (left - right) / (side * height);
  }
  return out;
}

/** The head's input: geometry features, then the CNN features of the feature region. */
export function assembleFeatures(evidence: Evidence, map: FeatureMapLike): Float32Array {
  const geometry = geometryFeatures(evidence);
  const cnn = cnnFeatures(map);
  const out = new Float32Array(geometry.length + cnn.length);
  out.set(geometry);
  out.set(cnn, geometry.length);
  return out;
}

/** The fitted head as stored in models/heads/analyze-head.json. */
export interface AnalyzeHead {
  readonly format: 'softmax-head/1';
  readonly version: string;
  readonly classes: readonly string[];
  /** Features are standardised, (x - mean) / scale, before the linear map. */
  readonly mean: readonly number[];
  readonly scale: readonly number[];
  /** classes x features, as integers: each weight is its integer times `weightScale`. */
  readonly weights: readonly (readonly number[])[];
  readonly weightScale: number;
  readonly bias: readonly number[];
  /** Below this photo-type confidence (0..1) a photo is unclassifiable (800). */
  readonly minTypeConfidence: number;
  /** An interior whose `featureStrength` is below this shows too little to be one (800). */
  readonly minInteriorStrength: number;
}

/** Checks a parsed head file once, at load: a malformed or mismatched file fails before any job runs. */
export function parseHead(json: unknown, featureCount = GEOMETRY_FEATURES.length + 2 * 1280): AnalyzeHead {
  const h = json as Partial<AnalyzeHead>;
  const problems: string[] = [];
  if (h?.format !== 'softmax-head/1') problems.push(`format ${String(h?.format)}`);
  if (typeof h?.version !== 'string') problems.push('no version');
  if (!Array.isArray(h?.classes) || h.classes.join() !== HEAD_CLASSES.join()) problems.push('classes');
  const d = featureCount;
  const vector = (v: unknown, n: number) =>
    Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!vector(h?.mean, d) || !vector(h?.scale, d) || !h?.scale?.every((x) => x > 0))
    problems.push('mean/scale');
  if (
    !Array.isArray(h?.weights) ||
    h.weights.length !== HEAD_CLASSES.length ||
    !h.weights.every((r) => vector(r, d) && r.every(Number.isInteger)) ||
    !(typeof h.weightScale === 'number' && h.weightScale > 0)
  ) {
    problems.push('weights');
  }
  if (!vector(h?.bias, HEAD_CLASSES.length)) problems.push('bias');
  if (typeof h?.minTypeConfidence !== 'number') problems.push('minTypeConfidence');
  if (typeof h?.minInteriorStrength !== 'number') problems.push('minInteriorStrength');
  if (problems.length > 0) throw new Error(`Not an analyze head for ${d} features: ${problems.join(', ')}`);
  return h as AnalyzeHead;
}

/** Softmax over the head's classes. */
export function headProbabilities(head: AnalyzeHead, features: ArrayLike<number>): Float64Array {
  const d = head.mean.length;
  if (features.length !== d) {
    throw new Error(`The analyze head takes ${d} features, got ${features.length}`);
  }
  const z = new Float64Array(head.classes.length);
  const x = new Float64Array(d);
  for (let j = 0; j < d; j++) x[j] = (features[j]! - head.mean[j]!) / head.scale[j]!;
  head.weights.forEach((row, c) => {
    let s = 0;
    for (let j = 0; j < d; j++) s += row[j]! * x[j]!;
    z[c] = head.bias[c]! + s * head.weightScale;
  });
  return softmax(z);
}

export function softmax(z: ArrayLike<number>): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i]!);
  const out = new Float64Array(z.length);
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    out[i] = Math.exp(z[i]! - max);
    sum += out[i]!;
  }
  for (let i = 0; i < z.length; i++) out[i]! /= sum;
  return out;
}

/**
 * Probabilities that do not depend on which way the photo was taken: the photo's own, averaged with the
 * mirrored photo's with left and right swapped back.
 */
export function mirrorAveraged(
  classes: readonly string[],
  own: ArrayLike<number>,
  mirrored: ArrayLike<number>,
): Float64Array {
  const index = new Map(classes.map((c, i) => [c, i]));
  return Float64Array.from(
    classes,
    (c, i) => (own[i]! + mirrored[index.get(mirrorView(c as HeadClass))!]!) / 2,
  );
}

export interface Decision<T extends string> {
  readonly value: T;
  /** 0..1. */
  readonly conf: number;
}

export interface Classification {
  readonly photoType: Decision<PhotoType>;
  /** Only for exteriors. */
  readonly view?: Decision<View>;
}

/**
 * How much the CNN sees: the length of the channel-mean block of a feature vector. A blank, flat or
 * washed-out picture is far below any labelled photo (grey 12, a smooth gradient 16, the weakest
 * labelled interior 21); a softmax head alone would still call such a picture an interior.
 */
export function featureStrength(features: ArrayLike<number>, channels = 1280): number {
  let sum = 0;
  for (let c = 0; c < channels; c++) sum += features[GEOMETRY_FEATURES.length + c]! ** 2;
  return Math.sqrt(sum);
}

/**
 * Photo type and view from the head's probabilities.
 * 1. Interior against the sum of the views gives the photo type.
 * 2. UnclassifiableError (800) when an interior shows less than `minInteriorStrength`, when the photo
 *    type is below the head's `minTypeConfidence`, or when an exterior has no vehicle in it: a blank or
 *    unrelated picture should not come back as some interior or view.
 * 3. For an exterior, the best view and its share of the exterior probability. A low view confidence
 *    is reported as such, not refused: the photo type is still known.
 */
export function decide(
  head: Pick<AnalyzeHead, 'classes' | 'minTypeConfidence' | 'minInteriorStrength'>,
  probabilities: ArrayLike<number>,
  evidence: { vehicleFound: boolean; strength: number },
): Classification {
  const interiorAt = head.classes.indexOf('interior');
  const interior = probabilities[interiorAt]!;
  const isInterior = interior >= 0.5;
  const typeConf = isInterior ? interior : 1 - interior;
  if (isInterior && evidence.strength < head.minInteriorStrength) {
    throw new UnclassifiableError(
      'The photo could not be classified: it shows neither a car nor an interior',
    );
  }
  if (typeConf < head.minTypeConfidence) {
    throw new UnclassifiableError(
      `The photo could not be classified: interior or exterior is only ${Math.round(typeConf * 100)}% sure`,
    );
  }
  if (isInterior) return { photoType: { value: 'interior', conf: typeConf } };
  if (!evidence.vehicleFound) {
    throw new UnclassifiableError('The photo could not be classified: no car was found in it');
  }
  let best = -1;
  for (let i = 0; i < head.classes.length; i++) {
    if (i !== interiorAt && (best < 0 || probabilities[i]! > probabilities[best]!)) best = i;
  }
  return {
    photoType: { value: 'exterior', conf: typeConf },
    view: { value: head.classes[best] as View, conf: probabilities[best]! / (1 - interior) },
  };
}

export interface AnalysisLabel {
  value: string;
  label: string;
  source_class?: string;
  conf: number;
}

export type Analysis = {
  photo_type: AnalysisLabel;
  view?: AnalysisLabel;
  detections: Record<string, { id: number; conf: number }>;
  background_detections: Record<string, { id: number; conf: number }>;
};

const percent = (p: number) => Math.max(0, Math.min(100, Math.round(p * 100)));
const className = (classId: number) => (COCO_CLASSES[classId] ?? `class_${classId}`).replaceAll(' ', '_');

/**
 * The spec's analysis object (2.4). `detections` holds what lies on the main car (its box, and objects
 * and plates whose centre is inside it); `background_detections` the objects and plates outside it.
 * Without a car everything is in `detections`. One entry per class, with its best score.
 */
export function toAnalysis(classification: Classification, evidence: Evidence): Analysis {
  const car = mainVehicle(evidence.objects);
  const detections: Analysis['detections'] = {};
  const background: Analysis['background_detections'] = {};
  const add = (into: Analysis['detections'], name: string, id: number, score: number) => {
    const conf = percent(score);
    if (!into[name] || into[name].conf < conf) into[name] = { id, conf };
  };
  const onCar = (box: Box) => !car || centreInside(box, car.box);
  const vehicles = new Set(distinctVehicles(evidence.objects));
  for (const o of evidence.objects) {
    if (o.score < OBJECT_SCORE_THRESHOLD) continue;
    // The main car again under another vehicle class.
    if (VEHICLE_CLASS_IDS.has(o.classId) && !vehicles.has(o)) continue;
    add(o === car || onCar(o.box) ? detections : background, className(o.classId), o.classId, o.score);
  }
  for (const p of evidence.plates) {
    if (p.score < PLATE_SCORE_THRESHOLD) continue;
    add(onCar(p.box) ? detections : background, 'license_plate', LICENSE_PLATE_ID, p.score);
  }
  const { photoType, view } = classification;
  return {
    photo_type: {
      value: photoType.value,
      label: LABELS[photoType.value],
      ...(photoType.value === 'exterior' && car ? { source_class: className(car.classId) } : {}),
      conf: percent(photoType.conf),
    },
    ...(view ? { view: { value: view.value, label: LABELS[view.value], conf: percent(view.conf) } } : {}),
    detections,
    background_detections: background,
  };
}
