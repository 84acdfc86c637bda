/** The turntable frames of ../shared/eval/extra (see its README) as labelled photos of tools/analyze-samples.ts. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { VIEWS, type View } from '#vision/math/vocabulary.ts';
import type { LabelledType, Photo } from './analyze-samples.ts';

/**
 * extra/turntable.csv: 14 cars on a show turntable, a frame every ~10 degrees, the view computed from the
 * rotation (extra/README.md); group = the car. None when the set is absent.
 */
export async function readTurntable(evalDir: string): Promise<Photo[]> {
  const csv = path.join(evalDir, 'extra', 'turntable.csv');
  if (!existsSync(csv)) return [];
  return (await readFile(csv, 'utf8'))
    .trim()
    .split('\n')
    .slice(1)
    .map((line): Photo => {
      const [file, car, angle, view, photoType] = line.split(',');
      if (!VIEWS.includes(view as View)) throw new Error(`${csv}: unknown view ${view} for ${file}`);
      return {
        source: 'turntable',
        file: `extra/${file}`,
        photoType: photoType as LabelledType,
        view: view as View,
        group: `turntable car ${car}`,
        angle: Number(angle),
      };
    });
}
