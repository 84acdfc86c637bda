import { CACHE_DIR, DEFAULT_EVAL_DIR } from '#tools/analyze-fit.ts';
import { observeSamples } from '#tools/analyze-samples.ts';
import { readTurntable } from '#tools/analyze-turntable.ts';
import { modelCache } from '#vision/models.ts';

const t = performance.now();
const photos = await readTurntable(DEFAULT_EVAL_DIR);
const s = await observeSamples(DEFAULT_EVAL_DIR, photos, modelCache({ threads: 1 }), {
  cacheDir: CACHE_DIR,
  log: console.log,
});
console.log(`${s.length} turntable samples in ${((performance.now() - t) / 1000).toFixed(0)} s`);
