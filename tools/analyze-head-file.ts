/**
 * The analyze head as it is shipped (models/heads/analyze-head.json, format `softmax-head/2`): both layers
 * over one standardisation, weights as integers, and the file read back as models to check the rounding.
 */
import { spawnSync } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PHOTO_TYPES, VIEWS } from '#vision/math/vocabulary.ts';
import { HEAD_VERSION, type HeadModels, REPO_ROOT, type Thresholds } from './analyze-fit.ts';
import type { SoftmaxModel } from './softmax.ts';

const round = (v: number, digits: number) => Number(v.toPrecision(digits));

export interface HeadFile {
  format: 'softmax-head/2';
  version: string;
  features: { count: number; description: string };
  training: Record<string, unknown>;
  minTypeConfidence: number;
  minInteriorStrength: number;
  mean: number[];
  scale: number[];
  weightScale: number;
  photoType: { classes: string[]; weights: number[][]; bias: number[] };
  view: { classes: string[]; weights: number[][]; bias: number[] };
}

const WEIGHT_SCALE = 1e-4;

/**
 * Both layers over one standardisation: the view layer's weights are rescaled from its own standardisation
 * (fitted on fewer samples) onto the photo-type layer's, which changes no prediction.
 */
export function headFile(
  models: HeadModels,
  thresholds: Thresholds,
  training: Record<string, unknown>,
): HeadFile {
  const { mean, scale } = models.photoType;
  const d = mean.length;
  const layer = (model: SoftmaxModel, classes: readonly string[]) => {
    // w.(x - m') / s' = sum_j (w_j s_j / s'_j) (x_j - m_j) / s_j + sum_j w_j (m_j - m'_j) / s'_j
    const weights = model.weights.map((row) =>
      Array.from({ length: d }, (_, j) => (row[j]! * scale[j]!) / model.scale[j]!),
    );
    const bias = model.bias.map((b, c) => {
      let shift = 0;
      for (let j = 0; j < d; j++)
        shift += (model.weights[c]![j]! * (mean[j]! - model.mean[j]!)) / model.scale[j]!;
      return b + shift;
    });
    return {
      classes: [...classes],
      weights: weights.map((row) => row.map((v) => Math.round(v / WEIGHT_SCALE))),
      bias: Array.from(bias, (v) => round(v, 6)),
    };
  };
  return {
    format: 'softmax-head/2',
    version: HEAD_VERSION,
    features: {
      count: d,
      description:
        'geometryFeatures (17: NanoDet-Plus main vehicle box, LPD-YuNet plate on it) then cnnFeatures of the ' +
        'MobileNetV2 int8 feature map "627" of the car crop (1280 channel means, 1280 left-minus-right column means) ' +
        'and of its two halves (1280 left-half-mean minus right-half-mean); ' +
        'see layers/vision/math/features.ts',
    },
    training,
    ...thresholds,
    mean: Array.from(mean, (v) => round(v, 5)),
    scale: Array.from(scale, (v) => round(v, 5)),
    weightScale: WEIGHT_SCALE,
    photoType: layer(models.photoType, PHOTO_TYPES),
    view: layer(models.view, VIEWS),
  };
}

/** The stored file as models, to check quantizing against the exact fit. */
export function modelsOfFile(file: HeadFile): HeadModels {
  const layer = (l: HeadFile['view']): SoftmaxModel => ({
    mean: Float64Array.from(file.mean),
    scale: Float64Array.from(file.scale),
    weights: l.weights.map((r) => Float64Array.from(r, (w) => w * file.weightScale)),
    bias: Float64Array.from(l.bias),
  });
  return { photoType: layer(file.photoType), view: layer(file.view) };
}

/** Writes the file, then lets Biome format it as `npm run lint` expects; its size in bytes. */
export async function writeHeadFile(file: HeadFile, out: string): Promise<number> {
  await writeFile(out, `${JSON.stringify(file)}\n`);
  const biome = path.join(REPO_ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const formatted = spawnSync(process.execPath, [biome, 'format', '--write', out], { encoding: 'utf8' });
  if (formatted.status !== 0) console.warn(`biome format did not run: ${formatted.stderr}`);
  return (await stat(out)).size;
}
