/**
 * `npm run eval`: how the models do on the labelled real photos of ../shared/eval (see its README).
 * 1. Plates (plates.csv): per region, held-out recall, false fills and wheel-like fills with intervals
 *    (test/eval/plates.ts).
 * 1b. Plates, leave one source out (eu, us, br, ro, in; interiors and side views without plates): the
 *    rule chosen on the other sources, figures on the one held out (test/eval/plate-sources.ts).
 * 1b'. Plates, every fill of the shipped finder on those sources by what it lies on: the labelled plate,
 *    another car's plate, or a non-plate fill with its cause, and fills' margins (test/eval/plate-fills.ts).
 * 1c. Plates, the scale ladder (issue 34): each plate found at its own size, shrunk to 60-10 px high in a
 *    4000x3000 street or car-park frame; recall per rung (test/eval/plate-ladder.ts).
 * 2. analyze: held-out figures per source with 95% intervals and the 800 rate per source
 *    (test/eval/analysis.ts).
 * 3. Backgrounds: proxies per source before and after the main-car step (test/eval/backgrounds.ts), and
 *    eval-out/contact-sheet.html to look at (test/eval/contact-sheet.ts).
 * 4. Studio (issue 26): on every exterior listing photo, mirrors lost by the corner proxy and the framing
 *    of `center`, with eval-out/studio-sheet.html (each result with its matte's outline); and edges at full
 *    resolution on the DAVIS car masks, before and after the refinement (test/eval/studio.ts,
 *    test/eval/masks-davis.ts); then the windows signals on the labelled sample (test/eval/windows.ts).
 * 5. Refusals (issue 23): background refusals of car photos per source through the operation's own path
 *    (test/eval/background-refusals.ts).
 * 6. The background operations' interior check (issue 32): photos refused as interiors, per source, the
 *    sources the head never saw marked (test/eval/exterior-check.ts).
 * The studio part prints the cut-out proxies (test/eval/matte-proxies.ts) and flags photos on its sheet, and
 * the main-car step against the DAVIS masks (test/eval/main-car-davis.ts).
 * 7. NanoDet's main-car boxes against hand-drawn boxes per side (test/eval/car-boxes.ts).
 * Skips with a message when ../shared/eval is not there.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelCache } from '#vision/models.ts';
import { evalAnalysis } from './analysis.ts';
import { evalRefusals } from './background-refusals.ts';
import { evalBackgrounds } from './backgrounds.ts';
import { evalCarBoxes } from './car-boxes.ts';
import { writeContactSheet } from './contact-sheet.ts';
import { evalExteriorCheck, exteriorCheckReport } from './exterior-check.ts';
import { evalMainCarDavis, mainCarDavisReport } from './main-car-davis.ts';
import { davisReport, evalDavis } from './masks-davis.ts';
import { evalPlateFills } from './plate-fills.ts';
import { evalPlateLadder } from './plate-ladder.ts';
import { evalPlateSources } from './plate-sources.ts';
import { evalPlates } from './plates.ts';
import { evalStudio, studioReport } from './studio.ts';
import { evalWindows, windowsReport } from './windows.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const outDir = path.join(repoRoot, 'eval-out');

if (!existsSync(path.join(evalDir, 'photos.csv')) || !existsSync(path.join(evalDir, 'plates.csv'))) {
  console.log(`No evaluation data at ${evalDir} (see ../shared/eval/README.md): nothing to evaluate.`);
} else {
  const models = modelCache({});
  // PHOTO_JOBS_EVAL=backgrounds (a comma list of plates, plate-sources, plate-fills, plate-ladder, analysis, backgrounds,
  // studio, refusals, exterior-check, car-boxes) runs only those parts.
  const parts = new Set(
    (
      process.env.PHOTO_JOBS_EVAL ??
      'plates,plate-sources,plate-fills,plate-ladder,analysis,backgrounds,studio,refusals,exterior-check,car-boxes'
    ).split(','),
  );
  if (parts.has('plates')) await evalPlates(evalDir, models);
  if (parts.has('plate-sources')) await evalPlateSources(evalDir, models, outDir);
  if (parts.has('plate-fills')) await evalPlateFills(evalDir, models, outDir);
  if (parts.has('plate-ladder')) console.log(await evalPlateLadder(evalDir, models, outDir));
  if (parts.has('analysis')) await evalAnalysis(evalDir, outDir);
  if (parts.has('backgrounds')) {
    const results = await evalBackgrounds(evalDir, models);
    const sheet = await writeContactSheet(evalDir, outDir, models, results);
    console.log(`\ncontact sheet: ${path.relative(repoRoot, sheet)}`);
  }
  if (parts.has('studio')) {
    const studio = await evalStudio(evalDir, outDir, models);
    console.log(`\n${studioReport(studio)}\nstudio contact sheet: ${path.relative(repoRoot, studio.sheet)}`);
    if (existsSync(path.join(evalDir, 'extra', 'masks-davis.csv')))
      console.log(davisReport(await evalDavis(evalDir, models)));
    if (existsSync(path.join(evalDir, 'extra', 'masks-davis.csv')))
      console.log(mainCarDavisReport(await evalMainCarDavis(evalDir, models)));
    // The windows sample reads the mattes the studio run just kept.
    const windows = await evalWindows(evalDir);
    console.log(`\n${windowsReport(windows, 'share')}\n${windowsReport(windows, 'colour')}`);
  }
  // Prints its table per source as it goes.
  if (parts.has('refusals')) await evalRefusals(models);
  if (parts.has('car-boxes')) console.log(`\n${await evalCarBoxes(evalDir, models)}`);
  if (parts.has('exterior-check')) console.log(`\n${exteriorCheckReport(await evalExteriorCheck(models))}`);
}
