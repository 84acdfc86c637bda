/**
 * From the head's probabilities to an answer: photo type and view, the 800 refusal, and the spec's
 * analysis object.
 */
import { UnclassifiableError } from '#core/errors.ts';
import {
  centreInside,
  distinctVehicles,
  type Evidence,
  mainVehicle,
  OBJECT_SCORE_THRESHOLD,
  PLATE_SCORE_THRESHOLD,
} from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import type { AnalyzeHead, HeadProbabilities } from '#vision/math/head.ts';
import { COCO_CLASSES, VEHICLE_CLASS_IDS } from '#vision/math/nanodet.ts';
import {
  LABELS,
  LICENSE_PLATE_ID,
  PHOTO_TYPES,
  type PhotoType,
  VIEWS,
  type View,
} from '#vision/math/vocabulary.ts';

export interface Decision<T extends string> {
  readonly value: T;
  /** 0..1. */
  readonly conf: number;
}

export interface Classification {
  readonly photoType: Decision<PhotoType>;
  /** For exteriors and podium photos. */
  readonly view?: Decision<View>;
}

/**
 * Photo type and view from the head's probabilities.
 * 1. The photo type is the best of the photo-type layer (exterior, interior, podium).
 * 2. UnclassifiableError (800) when an interior, or a photo without a vehicle box, shows less than
 *    `minInteriorStrength`, when the photo type is below the head's `minTypeConfidence`, or when an
 *    exterior or podium photo shows no car
 *    (no vehicle box and no plate): a blank or unrelated picture should not come back as some interior
 *    or view. A plate counts as a car: on a close-up of a front or rear the detector often finds no
 *    whole car, and a person would not hesitate.
 * 3. For an exterior or podium photo, the best view and its probability. A low view confidence is
 *    reported as such, not refused: the photo type is still known.
 */
export function decide(
  head: Pick<AnalyzeHead, 'minTypeConfidence' | 'minInteriorStrength'>,
  probabilities: HeadProbabilities,
  evidence: { vehicleFound: boolean; plateFound: boolean; strength: number },
): Classification {
  const type = argmax(probabilities.photoType);
  const photoType = PHOTO_TYPES[type]!;
  const typeConf = probabilities.photoType[type]!;
  // LPD-YuNet finds "plates" on blank pictures too (0.5-0.7 on flat grey or white), so a plate alone
  // does not make a featureless picture a car.
  const featureless = evidence.strength < head.minInteriorStrength;
  if (featureless && (photoType === 'interior' || !evidence.vehicleFound)) {
    throw new UnclassifiableError(
      'The photo could not be classified: it shows neither a car nor an interior',
    );
  }
  if (typeConf < head.minTypeConfidence) {
    throw new UnclassifiableError(
      `The photo could not be classified: its photo type is only ${Math.round(typeConf * 100)}% sure`,
    );
  }
  if (photoType === 'interior') return { photoType: { value: 'interior', conf: typeConf } };
  if (!evidence.vehicleFound && !evidence.plateFound) {
    throw new UnclassifiableError('The photo could not be classified: no car was found in it');
  }
  const view = argmax(probabilities.view);
  return {
    photoType: { value: photoType, conf: typeConf },
    view: { value: VIEWS[view]!, conf: probabilities.view[view]! },
  };
}

const argmax = (p: ArrayLike<number>): number => {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
};

interface AnalysisLabel {
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
      ...(photoType.value !== 'interior' && car ? { source_class: className(car.classId) } : {}),
      conf: percent(photoType.conf),
    },
    ...(view ? { view: { value: view.value, label: LABELS[view.value], conf: percent(view.conf) } } : {}),
    detections,
    background_detections: background,
  };
}
