/**
 * Far plates: a plate a few pixels a character high is read enlarged, and the recogniser gives look-alike
 * letters for its digits ("B" for 8, "O" for 0), so its reading alone is too coarse to confirm it, while
 * the detector's looks at it are too weak for the threshold. Together they are two signals on one place.
 */
import type { Box } from '#vision/math/geometry.ts';
import { OCR_REC_HEIGHT, plateText } from '#vision/math/ocr.ts';
import type { PlateCandidate, PlateRule } from '#vision/math/plate-evidence.ts';

/** Text is read on a proposal's box grown by this share of its width either side (`textReadBox`)... */
export const READ_ACROSS = 0.1;
/** ... and this share of its height above and below: a detector box often clips a character. */
export const READ_DOWN = 0.2;

/**
 * Whether the recogniser reads this box enlarged: its text box (`textReadBox`) is under the recogniser's
 * input height.
 */
export function readEnlarged(box: Box): boolean {
  return box.h * (1 + 2 * READ_DOWN) < OCR_REC_HEIGHT;
}

/**
 * `PlateRule.farText`: a proposal read enlarged, the whole-photo pass and the close look agreeing on it at
 * least `farLooks` (their geometric mean: the mirrored look is skipped on many such candidates), and its
 * reading plate-like at a confidence of at least `farText` with look-alike letters counted as digits even
 * without a digit read (`lookAlikesAlone`).
 */
export function farConfirmed(candidate: PlateCandidate, rule: PlateRule): boolean {
  const { scores, box, text } = candidate;
  if (rule.farText > 1 || !text || scores[0] === 0 || !readEnlarged(box)) return false;
  if (Math.sqrt(scores[0] * scores[1]) < rule.farLooks) return false;
  const region = { width: text.box.w, height: text.box.h };
  return plateText(text.reading, region, { lookAlikesAlone: true, minConfidence: rule.farText }).score > 0;
}
