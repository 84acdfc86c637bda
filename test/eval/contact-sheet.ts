/**
 * The contact sheet of `npm run eval`: eval-out/contact-sheet.html with small JPEG thumbnails beside it,
 * a row per photo, so a person can look at wheels, mirrors, plate edges and wrong views at a glance.
 * Per source, the photos the background proxies flag most (foreground outside the car, islands) and one
 * ordinary photo. Columns: the photo; `studio_background` and its mask before the main-car step (ISNet's
 * matte as it comes) and after it; `plate`'s fill (hidePlates); `analyze`'s labels.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { JobParams } from '#core/jobs/job.ts';
import { carDetector } from '#vision/car-detector.ts';
import { encodeResult } from '#vision/image-io.ts';
import type { ModelCache } from '#vision/models.ts';
import { analyzeOperation } from '#vision/operations/analyze.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { hidePlates } from '#vision/operations/hide-plates.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import { isnetSegmenter } from '#vision/segmenter.ts';
import { evalImage, type PhotoResult, type Source } from './backgrounds.ts';

const THUMB_WIDTH = 240;
const PER_SOURCE = 2;

const params: JobParams = {
  plateColor: '#ff00ff',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

/** Per source: the most flagged photos by the proxies before the fix, then the first ordinary one. */
function pickForSheet(results: readonly PhotoResult[], perSource = PER_SOURCE): PhotoResult[] {
  const sources = [...new Set(results.map((r) => r.source))] as Source[];
  const flagged = (r: PhotoResult) =>
    (Number.isNaN(r.before.outside) ? 0 : r.before.outside) + 0.05 * r.before.islands;
  return sources.flatMap((source) => {
    const of = results.filter((r) => r.source === source);
    const worst = [...of].sort((a, b) => flagged(b) - flagged(a)).slice(0, perSource - 1);
    const ordinary = of.find((r) => !worst.includes(r));
    return ordinary ? [...worst, ordinary] : worst;
  });
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export async function writeContactSheet(
  evalDir: string,
  outDir: string,
  models: ModelCache,
  results: readonly PhotoResult[],
): Promise<string> {
  const [segmenter, cars, detector] = await Promise.all([
    isnetSegmenter(models),
    carDetector(models),
    plateDetector(models),
  ]);
  const thumbDir = path.join(outDir, 'sheet');
  await rm(thumbDir, { recursive: true, force: true });
  await mkdir(thumbDir, { recursive: true });
  const thumb = async (name: string, bytes: Buffer) => {
    await writeFile(
      path.join(thumbDir, name),
      await sharp(bytes).resize({ width: THUMB_WIDTH }).jpeg({ quality: 80 }).toBuffer(),
    );
    return `sheet/${name}`;
  };
  const cell = (src: string, alt: string) =>
    `<td><img src="${src}" width="${THUMB_WIDTH}" alt="${escapeHtml(alt)}"></td>`;
  const text = (s: string) => `<td class="t">${s}</td>`;

  const rows: string[] = [];
  for (const [i, r] of pickForSheet(results).entries()) {
    const id = `${String(i).padStart(2, '0')}-${r.source}`;
    const image = await evalImage(evalDir, r.file);
    const source = (await encodeResult({ ...image, format: 'image/jpeg' })).data;
    const cells = [cell(await thumb(`${id}-photo.jpg`, source), r.file)];
    for (const [stage, deps] of [
      ['before', { segmenter, detector }],
      ['after', { segmenter, detector, cars }],
    ] as const) {
      try {
        const out = await replaceBackground(deps, source, params, null);
        cells.push(cell(await thumb(`${id}-${stage}.jpg`, out.image), `studio_background ${stage}`));
        cells.push(cell(await thumb(`${id}-${stage}-mask.jpg`, out.matte), `mask ${stage}`));
      } catch (error) {
        cells.push(text(escapeHtml(`${(error as Error).name}: ${(error as Error).message}`)), text(''));
      }
    }
    try {
      const filled = await hidePlates({ detector }, source, params);
      cells.push(cell(await thumb(`${id}-plate.jpg`, filled.image), 'plate fill'));
    } catch (error) {
      cells.push(text(escapeHtml((error as Error).name)));
    }
    let labels: string;
    try {
      const analysis = (
        await analyzeOperation(models, { source, sourceSha256: r.file, params, background: null })
      ).analysis as {
        photo_type: { value: string; conf: number };
        view?: { value: string; conf: number };
      };
      labels = `${analysis.photo_type.value} ${analysis.photo_type.conf}%<br>${
        analysis.view ? `${analysis.view.value} ${analysis.view.conf}%` : 'no view'
      }`;
    } catch (error) {
      labels = escapeHtml((error as Error).name);
    }
    const proxies = (stage: 'before' | 'after') => {
      const f = r[stage];
      const p = (v: number) => (Number.isNaN(v) ? '-' : `${(v * 100).toFixed(1)}%`);
      return `${stage}: outside ${p(f.outside)}, islands ${f.islands}, wheels ${p(f.wheels)}`;
    };
    cells.push(
      text(
        `<b>${escapeHtml(r.source)}</b> ${escapeHtml(r.file)}<br>${labels}<br>${proxies('before')}<br>${proxies('after')}`,
      ),
    );
    rows.push(`<tr>${cells.join('')}</tr>`);
  }
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>photo-jobs eval contact sheet</title>
<style>body{font:13px sans-serif;background:#222;color:#eee}td{vertical-align:top;padding:2px}
td.t{max-width:260px;word-break:break-all}th{text-align:left}</style></head><body>
<h1>photo-jobs eval contact sheet</h1>
<p>Photos scaled to at most 1024 px. studio_background with plate colour #ff00ff. "before" is ISNet's matte
as segmented, "after" keeps only the main car (isolateMainCar). Proxies as in docs/quality.md, Backgrounds.</p>
<table><tr><th>photo</th><th>studio before</th><th>mask before</th><th>studio after</th><th>mask after</th>
<th>plate fill</th><th>labels and proxies</th></tr>
${rows.join('\n')}
</table></body></html>
`;
  const file = path.join(outDir, 'contact-sheet.html');
  await writeFile(file, html);
  return file;
}
