import { writeFileSync } from 'node:fs';
import { FIT_SETTINGS, groupFolds, loadSamples, typeLabel, viewLabel } from '#tools/analyze-fit.ts';

const samples = await loadSamples(undefined, console.log);
const foldOf = groupFolds(
  samples.filter((s) => s.photo.source !== 'turntable').map((s) => s.photo.group),
  FIT_SETTINGS.folds,
  FIT_SETTINGS.seed,
);
const d = samples[0]!.features.length;
const all = new Float32Array(samples.length * 2 * d);
samples.forEach((s, i) => {
  all.set(s.features, 2 * i * d);
  all.set(s.mirroredFeatures, (2 * i + 1) * d);
});
writeFileSync('/tmp/i23v-feat.f32', Buffer.from(all.buffer));
writeFileSync(
  '/tmp/i23v-meta.json',
  JSON.stringify({
    d,
    samples: samples.map((s) => ({
      id: s.id,
      source: s.photo.source,
      aug: s.augmentation,
      group: s.photo.group,
      file: s.photo.file,
      type: typeLabel(s),
      v: viewLabel(s, false),
      vm: viewLabel(s, true),
      angle: s.photo.angle ?? null,
      fold: foldOf.get(s.photo.group) ?? -1,
    })),
  }),
);
console.log(`dumped ${samples.length} x ${d}`);
